// Package core is the sluice engine: a Guard holds rules and decides, per
// request, whether a resource may take more traffic.
//
//	guard, err := core.New(core.WithRules(
//		core.Rule{Name: "items", Resource: "GET /items/*", Kind: core.KindFlow, Limit: 100},
//		core.Rule{Resource: "*", Kind: core.KindConcurrency, Limit: 200},
//	))
//
// Package rulesfile reads the same rules from YAML and JSON files, and the
// adapters (packages sluicehttp, sluicegin, sluiceecho, sluicegrpc) put
// every request through a Guard. A Guard has no package-level state: its
// clock, rules, limiter state and statistics hang off it, and Close stops
// its goroutines.
//
// # Entering and exiting
//
// Without an adapter, a request is two calls:
//
//	e, err := guard.Enter(ctx, "GET /items/{id}",
//		core.WithParams(core.ParamMap{"header:X-User-ID": {userID}}))
//	if err != nil {
//		var b *core.BlockedError
//		if errors.As(err, &b) {
//			// b.Rule, b.Limit, b.RetryAfter, b.Policies: what a 429 needs
//		}
//		return
//	}
//	defer e.Exit(nil) // records completion and response time, releases concurrency
//
// or one, Guard.Do, when the work is a function. WithCount makes a request
// take several permits; WithQuotas returns the quotas that applied.
//
// With one flow rule, Enter reads the monotonic clock once, to decide and to
// time the request, and Exit for a sample of the requests (see Time); they
// touch a handful of atomics and do not allocate, and neither does a block
// (see Blocked requests).
//
// # Resources
//
// A resource is the name of what is protected. The HTTP adapters name a
// request "METHOD TEMPLATE", the route template it matched with {name}
// parameters ("GET /items/{id}", whether gin or echo wrote ":id");
// requests that match no route share "(unmatched)", never the raw path,
// and methods outside the standard set count as "OTHER". gRPC resources are
// full methods, "/pkg.Service/Method". Any other name ("checkout") is a
// custom name, for Enter calls of your own. Names beyond WithMaxResources
// (see there for rules' exact names) keep their rules but share the
// statistics of OverflowResource.
//
// # Rules
//
// A rule's Resource is a resource name or a glob (see Rule.Resource). A
// rule has one state shared by every resource it matches: "*" with a
// concurrency limit of 200 means 200 in flight across all resources. A
// request passes only if every matching rule passes it; what the rules
// that admitted it reserved is given back when a later one rejects it.
//
// A resource written otherwise is normalized, and the rule applies with
// one Info log line when the rules are set: a lowercase method, stray
// spaces, gin and echo parameters (":id" to "{id}"), a last catch-all
// ("*path" to "{path...}"). NormalizeRules and Guard.Rules show the
// canonical form. Refused, with a suggestion: a method other than GET,
// HEAD, POST, PUT, PATCH, DELETE, CONNECT, OPTIONS, TRACE, OTHER or '*';
// glob syntax sluice does not have ('?', '[', ']', "**"); a template not
// starting with '/' after a method; spaces inside a template; braces that
// are not a whole segment {name}, a last {name...} or a last {$}.
//
// New and SetRules validate the rules, with errors naming the rule, field,
// value and what is allowed; a set with an invalid rule is refused whole
// and the rules in force stay. SetRules replaces the rules atomically: a
// rule whose name, kind, resource and param are unchanged keeps its state
// (window counts, bucket levels, requests in flight, a breaker's state), so
// a reload does not reset a limit, also when it changes the window,
// buckets, limit, table size or bucket algorithm: counts are replayed into
// the new window and a bucket keeps all the requests it owes, however
// small the new one: a cut rate is waited out and a reload reverted gives
// nothing back (TestReloadCutHintsTheTrueWait). A switch between a leap
// array, a sliding log and the counters (other than fixed window and
// sliding counter), or a hotspot concurrency table of another size, starts
// afresh (package flow's TestReload); a sliding log cut to a smaller limit
// keeps the timestamps it drops (8 bytes each) for the next reload
// (TestSlidingLogReloadChain). A Rule marshals to JSON and YAML in the
// rules file's form; its enumerated fields take typed constants or plain
// strings ("token-bucket").
//
// # Flow rules
//
// A flow rule (KindFlow) limits the requests per Window (default 1s) with
// one of six algorithms:
//
//	algorithm        a decision costs                bound, in any interval of real time
//	leap-array       one atomic add, a sum over      at most Limit in Buckets consecutive buckets,
//	(default)        Buckets (default 10)            so in any Window - Window/Buckets
//	sliding-log      a small mutex; 8 bytes per      at most Limit in any Window
//	                 request of Limit (<= 2^20)
//	sliding-counter  two counters                    an estimate: the previous window weighted by overlap
//	fixed-window     one atomic add                  at most Limit per aligned window (2x across a boundary)
//	token-bucket     one compare-and-swap            at most Limit + Burst + d*Limit/Window in any d
//	leaky-bucket     one compare-and-swap            admitted requests at least Window/Limit apart
//
// These bounds hold however late the Guard's goroutines run on a busy
// host, and no retry hint is early (see Time).
//
// Token and leaky buckets, of flow rules and of every hotspot value, are
// exact up to one request per nanosecond: a request costs Window/Limit,
// kept to a fraction of a nanosecond, and waits and retry times are
// rounded up. Rules refuse what cannot be honoured, naming the largest
// value allowed: Limit at most 2^52, Window and MaxWait at most 2^52 ns
// (about 52 days), a token bucket's refill time Window+Burst*Window/Limit
// at most 2^52 ns.
//
// A leaky-bucket request waits up to MaxWait for its turn. The wait
// honours the request's context: a cancelled wait returns the context's
// error and gives its turn back, and the next request takes the gap (up to
// 1024 gaps per rule, 256 per hotspot table shard; beyond, a gap stays
// empty, which only makes later requests wait longer).
//
// Warmup starts a flow rule cold, at about Limit/ColdFactor (default 3),
// and warms it as its traffic uses up a store of tokens, as Sentinel's and
// Guava's warm-up do: a full-rate spike from cold reaches Limit after
// Warmup. A service idling below Limit/ColdFactor stays cold, so a spike
// after a quiet spell is always ramped; a warm rule left idle is cold
// again after 2*Warmup/(ColdFactor+1). A reload keeps how warm a rule is.
//
// # Concurrency and hotspot rules
//
// A concurrency rule (KindConcurrency) limits the requests in flight, from
// Enter to Exit; it reads no clock.
//
// A hotspot rule (KindHotspot) limits each value of a request's Param
// separately: each user (header:X-User-ID), tenant, API key or client IP
// (ip), with a token bucket (default), a leaky bucket, or a limit in flight
// (algorithm concurrency). Overrides give values limits of their own, 0
// blocking a value. Package extractors lists the params the adapters read;
// without an adapter, WithParams gives them. A request is asked only for
// the params a matching rule names, and a param with several values has
// each one checked. OnMissing says what a rule does with a request that
// lacks its param: skip it (the default), reject it as a request that will
// never pass, or count it in one state shared by all such requests (a
// budget for anonymous traffic, say).
//
// Values are tracked by a 64-bit keyed hash, never stored, in a table of
// at most MaxKeys values (default 100,000). The table evicts one-time
// values first, so a flood of new values does not evict the hot ones; a
// value evicted before its bucket is full again leaves its debt in a fixed
// array of cells and resumes from it, and a value with requests in flight
// is never evicted. A value evicted after spending half its bucket or more
// is never reset; one that spent less gets back at most what it spent. So
// a flood of junk values sent once or twice leaves new users their whole
// limit: with 5 per 15 min and MaxKeys 1000, 10,000 or 100,000 junk values
// sent twice leave 99-100% of new users their 5 attempts during the flood,
// right after it and a minute later (TestFloodLeavesNewUsersTheirLimit in
// core/internal/hotspot). A flood of more values than the table can tell
// apart, each spending half its bucket or more, still makes new values
// start with spent buckets (the error is on the limit's side) until one
// bucket capacity after it.
// Keep MaxKeys above the number of values seen within one window to keep
// new values exact.
//
// A custom param, or a proxy to trust, is declared once, in the extractor
// given to the Guard (WithParamSource), which its adapters read params
// with. Once a Guard has a param source (an adapter's, or CustomParams for
// params the program passes), a hotspot rule naming a param no source
// supplies (a typo, say) is refused, and the rules in force stay (see
// ParamSource).
//
// # Circuit breakers
//
// A breaker rule (KindBreaker) watches the outcomes of its resources'
// requests (the error given to Exit, the response time the Guard measured)
// and blocks them all for a while when too many fail or are slow:
//
//   - closed: requests pass and their outcomes are counted over Window
//     (default 10s). Once MinRequests completed in it, the breaker trips
//     when the bad ones reach Threshold: slow-ratio counts requests slower
//     than MaxRT and error-ratio failed ones, both as a share of all;
//     error-count counts failed requests.
//   - open: every request is blocked for OpenFor (default 5s).
//   - half-open: Probes requests pass (default 1) and the others are
//     blocked. When all succeed the breaker closes, its statistics started
//     afresh; when one fails, or one has not finished OpenFor after it
//     passed (or after another succeeded), it opens again. A probe another rule rejects gives its
//     place to a later request.
//
// While half-open, only the probes' outcomes count, and the outcomes of
// requests admitted before a state change never count after it. A reload
// that keeps the rule keeps its state, and its counts unless it changes
// the window or what is bad (strategy slow-ratio or not, MaxRT). State
// changes go to WithBreakerListener's function and to the log, never from
// a request.
//
// # Adaptive and system rules, priorities
//
// An adaptive rule (KindAdaptive) is a limit on requests in flight that
// finds itself from response times, between MinLimit and MaxLimit. Every
// Window it compares the average response time of the requests that ended
// with the lowest it has seen: the limit grows while they stay close to it,
// holds up to Tolerance times it, and shrinks beyond. It re-measures the
// lowest response time with probes that lower the limit for a few windows,
// at most ProbeInterval apart. RuleStats.Adaptive shows the limit in force.
//
// A system rule (KindSystem) sheds requests, whoever sends them, while a
// Signal of the service's load is above Threshold: the rate it admits
// (qps), its requests in flight (inflight), their response time (rt), CPU
// usage (cpu) or the load average (load); see the Signal constants for
// units, sources and what each sheds. The host's signals are read every
// half second by a goroutine of the Guard while a rule needs them; a rule
// whose signal the host cannot give is refused. WithSystemSource gives
// tests a source of their own.
//
// A request has a Priority (critical, default or sheddable) by which
// adaptive and system rules shed, the lower levels first. There is no
// queue: a burst of critical requests finds room only where room was kept
// free.
//
// # Shadow rules
//
// A shadow rule (Rule.Shadow, or every rule with WithShadow, which says
// how) is evaluated and counted, never enforced: RuleStats.Shadowed counts
// the requests it would have rejected.
//
// # Kinds of your own
//
// WithKind adds a kind of rule of a Guard's own (KindDef says what it
// defines), enforced by a rule of a built-in kind. Rules files
// (rulesfile.NewGuard with the same option), the adapters and Snapshot
// treat it as a built-in kind; Kinds lists the built-in ones.
//
// # Shared stores
//
// A flow or hotspot rule with a Store keeps its counts in a store given
// with WithStore (package store; Redis: package redisstore), so its limit
// holds for every instance together. A flow rule then uses sliding-counter
// (its default there), token-bucket or leaky-bucket, a hotspot rule
// token-bucket (its default) or leaky-bucket; Rule.Mode says how the store
// decides. While the store fails, a request applies the rule's OnFailure:
// local (the default: this instance alone, at LocalLimit), open (admit) or
// closed (reject). Each store has one breaker per mode, so an approximate
// rule never hides an exact rule's failures: after failures
// (WithStoreBreaker), or exact calls slower than WithStoreLatencyBudget
// (default 20ms) beyond the host's own lag, the Guard leaves that mode of
// the store alone for a while, then probes it one request at a time. An
// approximate rule whose store cannot sync (package redisstore says for
// how long) applies its OnFailure too, and so does, without counting
// against the breaker, a key its store cannot keep yet
// (store.ErrKeyUnavailable). Guard.Stores reports each store's health per
// mode (since when, why, latency, and each rule's policy and local limit);
// a rejection made by the policy has BlockedError.Fallback set.
//
// # Blocked requests
//
// Every rule that applies is asked, also after one has rejected the
// request (the rules after it keep nothing of it), so
// BlockedError.RetryAfter is the latest time any rejecting rule allows: a
// client that waits that long is not refused by a rule nobody asked; and
// BlockedError.Policies lists every quota policy. Rules kept in a store
// are the exception: they are not asked after a rule in memory rejected
// the request, so that a flood rejected anyway does not load the store.
//
// # Rules that match nothing
//
// RuleStats.Resources lists the resources a rule applied to, and Evaluated
// counts the requests it was checked against. A rule that applies to no
// request for WithUnmatchedAfter (default 5 minutes) after it was set is
// logged once at Warn and flagged Unmatched. Adapters that know their
// routes check the rules against them at their first request and at every
// reload, and log the rules that match no route: echo by itself, gin with
// sluicegin.WithRoutes, net/http with sluicehttp.Handle; another router
// gives its routes to Guard.AddRoutes and calls Guard.CheckRoutes.
//
// # Statistics and logs
//
// Snapshot returns the statistics of each resource (its last second, and
// totals since it was first entered), of each rule and of each store;
// package prometheus, package otel and package dashboard read it. History
// returns the last 10 minutes, a point a second, which the Guard keeps in
// fixed memory from History's first call (TestHistoryMemoryIsBounded).
// WithTopBlockedValues, off by default since it keeps request values,
// tracks the values each hotspot rule blocked most.
//
// The Guard logs to slog.Default (WithLogger for another): breaker state
// changes, a store failing and working again, rules that match nothing,
// and each rule that blocks requests, once when it starts and then at most
// once per 10 seconds with the count. The log is rate-limited as a whole
// (10 records a second, bursts of 20; the suppressed are counted in the
// next record) and written from a goroutine of the Guard.
//
// # Time
//
// Rules decide on the monotonic clock; WithClock gives the Guard another,
// such as package clock's fake clock for tests. A clock stepped backwards
// drops no count and lets no limit be bypassed. Requests are timed on the
// same clock, so a response time is true however busy the host is: every
// request when a rule reads response times (breaker, adaptive, system),
// on a WithClock clock or of several permits, otherwise a sample of one in
// 32 that stands for the others (see ResourceStats).
package core
