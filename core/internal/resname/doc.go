// Package resname is the grammar of resource names as rules write them:
// "METHOD TEMPLATE" for HTTP routes (a template in net/http's ServeMux
// syntax, in which '*' is a glob), a template alone for every method, a
// gRPC full method, or a custom name. Canonical puts a rule's Resource in
// the form the extractors give resource names, or says what is wrong and
// what to write instead; `go test -run Canonical ./core/` checks it on
// every form the README and the adapters document.
package resname
