// Package exampleapp is what the net/http, gin and echo examples share:
// their command line and program (Run), their default rules, the handlers
// of their routes, and a server that shuts down gracefully. NewGuard, the
// rules loading with live reload of a rules file, serves the gRPC example
// too.
//
// Every example serves the same routes:
//
//	GET /hello       200, text
//	GET /items/{id}  200, JSON
//	GET /slow?ms=N   sleeps N ms (default 50, at most MaxSlow), then 200
//	GET /fail        500
package exampleapp
