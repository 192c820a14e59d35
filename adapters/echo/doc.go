// Package sluiceecho puts echo routes under a sluice Guard: every request
// enters the Guard (core.Guard.Enter) before the next handler runs and
// exits it when that handler returns, and a request the Guard blocks gets a
// 429 (or 503) response instead.
//
//	guard, err := rulesfile.NewGuard("rules.yaml")
//	...
//	e := echo.New()
//	e.Use(middleware.Recover(), sluiceecho.Middleware(guard))
//
// A request's resource is "METHOD TEMPLATE", TEMPLATE being the route it
// matched with its parameters written as net/http writes them: the route
// "/items/:id" is the resource "GET /items/{id}", so one rules file serves
// the net/http and gin adapters too. Requests that match no route (echo's
// 404 and 405, also the 404s of the catch-all routes Group.Use adds) share
// the resource extractors.Unmatched (TestGroupMiddlewareKeepsNotFoundUnmatched). Path params
// (path:NAME) are the route's parameters, percent-decoded as net/http
// decodes them (echo gives "%62ob" undecoded when the path has escapes it
// would not write; the param is "bob"); the other params (header:NAME,
// query:NAME, cookie:NAME, ip, method, host, custom ones) are read by
// package extractors, only when a matching hotspot rule names them, with
// the Extractor given to the Guard (core.WithParamSource) or to the
// middleware (WithExtractor). The client IP is the socket peer unless the
// Extractor trusts the peer as a proxy, or, with WithFrameworkClientIP,
// c.RealIP(), which follows the Echo's IPExtractor. A param of
// extractors.WithContextParam reads what an earlier middleware stored with
// c.Set (or in the request's context), so that an authentication
// middleware's user limits as is.
// WithCost makes a request take several permits, as core.WithCount does.
//
// WithSkipper takes a middleware.Skipper, in the manner of echo's own
// middleware configs. At its first request the middleware gives the Guard
// the server's routes, so that rules matching none of them are logged
// (core.Guard.CheckRoutes).
//
// The response to a blocked request (status, Retry-After, RateLimit-Policy,
// RateLimit and the problem+json body) is the one of the net/http adapter:
// see package sluicehttp for the details and DefaultBlockHandler here;
// WithBlockHandler replaces it. Admitted responses carry the RateLimit
// fields too, unless WithRateLimitFields(false).
//
// New returns the error of an invalid option; Middleware, for the one-line
// use above, panics with it.
//
// An admitted request exits the Guard once, when the next handler returns:
// as an error when it returned an error (except an *echo.HTTPError below
// 500, echo's way to answer 404 or 400) or the status is 500 or more;
// WithErrorClassifier changes that. The handler's error is returned
// unchanged, for echo's HTTPErrorHandler. When a handler panics, the
// request exits as an error and the panic goes on to middleware.Recover
// (install it before this middleware), its concurrency slots released.
// When the handler returned nil without writing anything after the
// request's context ended, the request exits with the context's error: a
// failure by default, and gone for system rules and breakers
// (core.Entry.Exit), as in package sluicehttp; so is a request failing
// (by its error or its status) once its context ended, as a downstream
// call fails when the client hangs up. So is a failure after reading the
// request's body failed (malformed, cut short, too slow): a client, still
// there, whose bad upload a reverse proxy answers 502 (or a handler fails
// or panics for) cannot open a breaker (5 such uploads did; go test -run
// TestSuite/MalformedBody .). A request that waits for a leaky-bucket turn stops waiting when its client
// disconnects: it is counted as blocked and the middleware writes nothing
// and returns nil.
//
// On the pass path the middleware allocates nothing of its own per
// request but, for a request with a body, the httpadapter.Body it reads
// through: the params Enter reads (which the Guard uses only during
// Enter) come from a pool of the middleware's, and the RateLimit fields'
// texts and values are carved from blocks that serve ten responses or
// more (httpadapter.QuotaFields).
// Echo itself builds the chain of middleware anew for every request (for
// e.Use, group and route middleware alike), and the function each
// echo.MiddlewareFunc returns for the request's next handler is one
// allocation: any middleware costs that, this one included.
//
// In process, on the static route of BenchmarkEchoMiddleware under a flow
// and a hotspot rule, the middleware adds about 390 ns of CPU time per
// request to the Guard's Enter and Exit (674 against 281 cpu-ns/op
// serially; echo alone 61), echo's allocation for any middleware
// included, about 170 of which are the RateLimit fields
// (BenchmarkRateLimitFields/pair, added-ns/op): medians of 4 interleaved
// rounds on 2 busy AMD EPYC vCPUs.
//
//	go -C adapters/echo test -run '^$' -bench 'EchoMiddleware/static|RateLimitFields' -benchmem .
package sluiceecho
