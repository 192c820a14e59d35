// Package sluicehttp puts net/http handlers under a sluice Guard: every
// request enters the Guard (core.Guard.Enter) before the handler runs and
// exits it when the handler returns, and a request the Guard blocks gets a
// 429 (or 503) response instead of the handler's.
//
//	guard, err := rulesfile.NewGuard("rules.yaml")
//	...
//	http.ListenAndServe(addr, sluicehttp.Middleware(guard)(mux))
//
// (New returns an invalid option's error instead of panicking), or, one
// route at a time,
//
//	mux.Handle("GET /items/{id}", sluicehttp.Wrap(guard, items))
//
// # Resources and params
//
// A request's resource is "METHOD TEMPLATE", TEMPLATE being the ServeMux
// pattern it matched without its method and host ("GET /items/{id}"), so
// rules name routes, never raw paths, and one rules file serves the gin
// and echo adapters too. Requests that match no pattern share the resource
// extractors.Unmatched ("(unmatched)"). Middleware learns the pattern from
// the ServeMux it wraps before the ServeMux serves the request (see
// Middleware); Wrap reads r.Pattern. WithResource names resources
// otherwise.
//
// Hotspot rules limit by request values that package extractors reads
// (header:NAME, query:NAME, cookie:NAME, path:NAME, ip, method, host, or
// custom params): only those a matching rule names, only when Enter asks.
// The client IP (ip) is the socket peer unless the peer is a trusted proxy
// of the Extractor (extractors.WithTrustedProxies), the one given to
// the Guard (core.WithParamSource) or to the middleware (WithExtractor); by
// default no proxy is trusted, so X-Forwarded-For and its kin cannot
// change a client's address.
//
// # Blocked requests
//
// A blocked request gets DefaultBlockHandler's response, unless
// WithBlockHandler replaces it:
//
//	HTTP/1.1 429 Too Many Requests
//	Content-Type: application/problem+json
//	Cache-Control: no-store
//	Retry-After: 1
//	RateLimit-Policy: "hello-rate";q=5;w=1
//	RateLimit: "hello-rate";r=0;t=1
//
//	{"type":"https://iana.org/assignments/http-problem-types#quota-exceeded",
//	 "title":"Quota Exceeded","status":429,
//	 "detail":"GET /hello allows 5 requests per 1s; retry in 1s",
//	 "rule":"hello-rate","limit":5,"window":1,"retryAfter":1,
//	 "violated-policies":["hello-rate"]}
//
// The status is 429 Too Many Requests for rate limits (flow rules, and
// hotspot token and leaky buckets) and for per-value limits on requests in
// flight (hotspot rules with algorithm concurrency): the client, or the
// user, tenant or address it speaks for, sent too many requests. It is 503
// Service Unavailable for concurrency rules, which limit the requests of a
// resource in flight whoever sends them: the client blocked may have sent
// one request in an hour, what it met is a server at capacity, which is
// what 503 says; and a 503 lets load balancers and clients retry on another
// instance, where the request may well pass, where a 429 would tell a
// client that sends little to slow down. It is 503 for an open circuit
// breaker too (see "Circuit breakers" below), and for adaptive and system
// rules, which shed load when the server is overloaded, whoever sends it:
// a system rule's response has the problem type
// temporary-reduced-capacity, the members rule, kind ("system") and
// retryAfter, and no RateLimit fields.
// A request no wait lets through (a value whose limit is 0, a cost above a
// rule's capacity) gets 403 Forbidden, which clients and retry libraries do
// not repeat (RFC 9110, section 15.5.4), where they retry a 429 or a 503
// even without Retry-After.
//
// Retry-After is the time after which the same request would pass, in
// whole seconds rounded up, so never earlier than the real time, and at
// least 1 when that time is above 0. Limits on requests in flight have no
// such time (a slot frees whenever a request ends): their responses have no
// Retry-After.
//
// RateLimit-Policy and RateLimit are the fields of
// draft-ietf-httpapi-ratelimit-headers (revision 11), Lists of structured
// fields (RFC 9651): the policy item has the rule's limit as q and its
// window as w, in whole seconds rounded up and at least 1 (the field has no
// sub-second windows, so a sub-second window is advertised as a stricter
// policy: the same quota over a longer window); the limit item has the
// quota left as r and, as t, the seconds until the request would pass,
// rounded up: the same number as Retry-After, which is thus never earlier
// than t. A limit on requests in flight is advertised with
// qu="concurrent-requests" and no w or t. Items are named by the rule, as
// a structured-field String: '"' and '\' are escaped, and every byte
// outside printable ASCII, and '%', is written %XX, so any rule name
// survives intact and a percent-decoder recovers it.
//
// The body is an RFC 9457 problem: its type is the problem type the draft
// defines for the status (quota-exceeded for 429,
// temporary-reduced-capacity for 503), with the extension members rule,
// limit, window (seconds, 0 for limits on requests in flight), retryAfter
// (whole seconds, as in Retry-After, 0 when absent), violated-policies (the
// rule) and, for hotspot rules, param (the param limited, never the
// client's value).
//
// Admitted responses carry RateLimit-Policy and RateLimit too, one member
// per rate rule (flow or hotspot) that admitted the request, as
// go-limiter, ulule/limiter and tollbooth send theirs:
//
//	RateLimit-Policy: "hello-rate";q=5;w=1
//	RateLimit: "hello-rate";r=3;t=1
//
// WithRateLimitFields(false) turns them off on admitted responses.
//
// # Outgoing calls
//
// NewTransport puts the calls a client makes through a Guard, as an
// http.RoundTripper: a call's resource is "METHOD HOST" ("GET
// api.example.com"; "* api.example.com" in a rule covers every method), a
// blocked call returns the *core.BlockedError without touching the
// network, and 5xx answers and transport errors count as failures, so that
// a breaker rule keeps calls away from a failing upstream. With
// WithThrottle the client also throttles itself while the upstream answers
// 429 or 503 (package throttle).
//
//	t, err := sluicehttp.NewTransport(guard, nil, sluicehttp.WithThrottle(th))
//	client := &http.Client{Transport: t}
//
// An upload of a file keeps net/http's sendfile: 4 MiB over loopback
// allocates 6.2 KB through NewTransport, 5.6 KB through net/http's
// Transport alone (39 KB before sendfile was kept: a 32 KB copy buffer);
// their CPU times per upload do not differ beyond noise (go test -run '^$'
// -bench TransportFileUpload -benchmem -count 5 ./adapters/nethttp).
//
// # Routes
//
// Handle registers a route on a ServeMux and tells the Guard about it, so
// that rules matching no route of the service are logged (see
// core.Guard.CheckRoutes); a ServeMux cannot list its patterns itself.
//
// # Identity and cost
//
// An authentication middleware's user or tenant limits without being
// copied into the request: extractors.WithContextParam names a param read
// from the request's context under a key of the application's (the gin
// and echo adapters also read c.Get). WithCost makes a request take
// several permits (a batch, a query's complexity), as core.WithCount does.
//
// # Circuit breakers
//
// A request that a circuit breaker (a rule of kind breaker) blocks, because
// the resource's recent requests failed or were slow, gets 503 Service
// Unavailable: the resource is failing, whoever asks.
//
//	HTTP/1.1 503 Service Unavailable
//	Content-Type: application/problem+json
//	Cache-Control: no-store
//	Retry-After: 5
//
//	{"type":"https://iana.org/assignments/http-problem-types#temporary-reduced-capacity",
//	 "title":"Temporary Reduced Capacity","status":503,
//	 "detail":"GET /fail is failing: circuit breaker \"fail-breaker\" is open; retry in 5s",
//	 "rule":"fail-breaker","kind":"breaker","retryAfter":5}
//
// Retry-After is the time until the breaker lets a probe through (while it
// is half-open with every probe out, until the probes' deadline), rounded
// up as for other blocks. A breaker is no quota policy: the response has no
// RateLimit-Policy or RateLimit fields (fields an earlier middleware set
// are removed), and its problem has no
// limit, window or violated-policies members; kind says what blocked the
// request. The handler is not called while the breaker is open; the
// outcomes of the requests it lets through, classified by the error
// classifier (see "Outcomes"), are what opens and closes it.
//
// # Outcomes
//
// An admitted request exits the Guard exactly once, when the handler
// returns, as a success or an error for the Guard's statistics: an error
// when the status written is 500 or more (WithErrorClassifier changes
// that). A handler that panics exits as an error (gone, see below, when the
// client had left: a reverse proxy aborts so), and the panic goes on
// unchanged, to the server or to a recovery middleware around this one; its
// concurrency slots are released either way.
//
// A handler that returns without writing anything (no header, no body)
// after the request's context ended (the client gave up, or a deadline
// passed) exits with the context's error: the classifier sees status 200
// and context.Canceled or DeadlineExceeded, and by default counts a failure,
// and the request is "gone" (core.Entry.Exit): no completion for system
// rules, so that abandoned requests do not raise a BBR bound, and no error
// for breakers, so that clients hanging up cannot open one. A response written after the client
// left counts by its status; when that is a failure (a reverse proxy's 502
// for the hang-up), the request is gone too. The adapters' shared suite checks
// both (go test -run '^Test(Middleware|Wrap)$/ClientGoneBeforeAnswer' ./adapters/nethttp/).
// So is a failure after reading the request's body failed (malformed, cut
// short, too slow): a client, still there, whose bad upload a reverse
// proxy answers 502 (or a handler panics for), cannot open a breaker
// either.
//
// A request that waits for its turn under a leaky-bucket rule waits as long
// as its context lives: when the client disconnects (or a deadline ends the
// request) the wait ends, the request counts as blocked, and nothing is
// written, since no one would read it.
//
// The ResponseWriter the handler gets records the status and passes
// everything on; it implements http.Flusher, http.Hijacker, io.ReaderFrom
// and io.StringWriter, and http.ResponseController reaches the writer
// beneath it. http.MaxBytesReader given this writer cannot tell net/http
// that its limit was hit; the middleware does, so that the server still
// answers with "Connection: close" and reads no more of an oversized body:
// when the handler answers 413 before the body's end, or leaves in r.Body
// a MaxBytesReader whose limit was hit (go test -run
// TestOversizedBodyClosesTheConnection ./adapters/nethttp/).
//
// # Cost
//
// On the pass path the middleware makes one allocation per request: the
// ResponseWriter it hands the handler. The params Enter reads
// (which the Guard uses only during Enter) come from a pool of the
// middleware's. The RateLimit fields add none per response: the
// RateLimit-Policy text is made once per rule and rule set, and the
// RateLimit text and both values are carved from blocks that serve ten
// responses or more (httpadapter.QuotaFields). Middleware routes each
// request before next does, to name it (a ServeMux's Handler method).
// Around a *http.ServeMux it then calls the
// handler it found, as the ServeMux would, unless the pattern has wildcards
// (or another ServeMux routed the request before, or the ServeMux answers
// the request itself): the ServeMux sets the request's path values in
// fields only it can set, so it routes those requests a second time, and
// allocates their wildcard values again; such routes cost one allocation
// more through Middleware than through Wrap, which the ServeMux has
// already routed to.
//
// In process, on the static route of BenchmarkNetHTTPMiddleware under a
// flow and a hotspot rule, the middleware adds about 440 ns of CPU time
// per request to the Guard's Enter and Exit (767 against 331 cpu-ns/op
// serially; the ServeMux alone 85), about 220 of which are the RateLimit
// fields (BenchmarkRateLimitFields/pair, added-ns/op): medians of 4
// interleaved rounds on 2 busy AMD EPYC vCPUs.
//
//	go test -run '^$' -bench 'NetHTTPMiddleware/static|RateLimitFields' -benchmem ./adapters/nethttp
package sluicehttp
