// Package sluicegin puts gin routes under a sluice Guard: every request
// enters the Guard (core.Guard.Enter) before the rest of the chain runs and
// exits it when the chain returns, and a request the Guard blocks gets a
// 429 (or 503) response and the chain is aborted.
//
//	guard, err := rulesfile.NewGuard("rules.yaml")
//	...
//	r := gin.New()
//	r.Use(gin.Recovery(), sluicegin.Middleware(guard))
//
// A request's resource is "METHOD TEMPLATE", TEMPLATE being the route it
// matched with its parameters written as net/http writes them: the route
// "/items/:id" is the resource "GET /items/{id}" and "/files/*path" is
// "GET /files/{path...}", so one rules file serves the net/http and echo
// adapters too. Requests that match no route (gin's 404 and 405) share the
// resource extractors.Unmatched. Path params (path:NAME) are the route's
// parameters, a catch-all's without its leading '/' ("a/b.txt" for
// /files/a/b.txt, as net/http gives it), decoded as net/http decodes them
// when gin routes by the escaped path (UseRawPath, UseEscapedPath: gin
// gives "a b" for /items/a+b%2F, net/http and the param "a+b/"); the other params (header:NAME, query:NAME, cookie:NAME, ip,
// method, host, custom ones) are read by package extractors, only when a
// matching hotspot rule names them, with the Extractor given to the Guard
// (core.WithParamSource) or to the middleware (WithExtractor). The client
// IP is the socket peer unless the Extractor trusts the peer as a proxy,
// or, with WithFrameworkClientIP, c.ClientIP(), which follows the engine's
// trusted-proxy settings (gin trusts every proxy until SetTrustedProxies
// is called). A param of extractors.WithContextParam reads
// what an earlier middleware stored with c.Set (or in the request's
// context), so that an authentication middleware's user limits as is.
// WithCost makes a request take several permits, as core.WithCount does.
//
// The response to a blocked request (status, Retry-After, RateLimit-Policy,
// RateLimit and the problem+json body) is the one of the net/http adapter:
// see package sluicehttp for the details and DefaultBlockHandler here;
// WithBlockHandler replaces it. Admitted responses carry the RateLimit
// fields too, unless WithRateLimitFields(false).
//
// New returns the error of an invalid option; Middleware, for the one-line
// use above, panics with it. WithRoutes gives the Guard the engine's
// routes, so that rules matching none of them are logged
// (core.Guard.CheckRoutes); WithSkipper lets requests through without
// entering the Guard.
//
// An admitted request exits the Guard once, when the chain after the
// middleware returns: as an error when the status is 500 or more, or a
// handler attached an error to the context (c.Error) and answered below
// 400 or not at all (an error attached to a 4xx, as c.Bind attaches to the
// 400 it answers a malformed body with, is the client's: one client's bad
// requests cannot open an error breaker for all); WithErrorClassifier
// changes that. When a handler panics, the request exits as an error and
// the panic goes on to gin.Recovery (install it before this middleware),
// its concurrency slots released. When the chain wrote nothing (no body,
// no status but 200) and attached no error after the request's context
// ended, the request exits with the context's error: a failure by default,
// and gone for system rules and breakers (core.Entry.Exit), as in package
// sluicehttp; so is a request failing (by an attached error or its status)
// once its context ended, as a downstream call fails when the client hangs
// up. So is a failure after reading the request's body failed (malformed,
// cut short, too slow): a client, still there, whose bad upload a reverse
// proxy answers 502 (or a handler panics for) cannot open a breaker (5
// such uploads did; go test -run TestSuite/MalformedBody .). A request that waits for a leaky-bucket
// turn stops waiting when its client disconnects: it is aborted, counted as
// blocked, and the middleware writes nothing (gin then ends it as it ends
// any request no handler answered, on a connection no one reads).
//
// On the pass path the middleware allocates nothing per request but, for
// a request with a body, the httpadapter.Body it reads through: the
// route parameters are handed to the extractor in place, the params Enter
// reads (which the Guard uses only during Enter) come from a pool of the
// middleware's, and the RateLimit fields' texts and values are carved
// from blocks that serve ten responses or more (httpadapter.QuotaFields).
//
// In process, on the static route of BenchmarkGinMiddleware under a flow
// and a hotspot rule, the middleware adds about 290 ns of CPU time per
// request to the Guard's Enter and Exit (558 against 265 cpu-ns/op
// serially; gin alone 71), about 185 of which are the RateLimit fields
// (BenchmarkRateLimitFields/pair, added-ns/op): medians of 4 interleaved
// rounds on 2 busy AMD EPYC vCPUs.
//
//	go -C adapters/gin test -run '^$' -bench 'GinMiddleware/static|RateLimitFields' -benchmem .
package sluicegin
