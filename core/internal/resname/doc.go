// Package resname is the grammar of resource names as rules write them:
// "METHOD TEMPLATE" for HTTP routes (a template in net/http's ServeMux
// syntax, in which '*' is a glob), a template alone for every method, a
// gRPC full method, or a custom name. Canonical puts a rule's Resource in
// the form the extractors give resource names, or says what is wrong and
// what to write instead: `go test ./core/internal/resname/` checks it on
// the forms of net/http, gin and echo routes and of gRPC methods, and that
// every canonical form is its own.
package resname
