// Package core is the sluice engine: a Guard holds flow, concurrency,
// hotspot and breaker rules and decides, per request, whether a resource
// may take more traffic.
//
// A resource is the name of a protected thing: a route template such as
// "GET /items/{id}", or a gRPC method such as "/pkg.Service/Method". Rules
// name the resources they limit exactly or by a glob ("GET /items/*", "*");
// every rule that matches a resource applies, and a request passes only if
// all pass. Rules are Go values (Rule), checked by NormalizeRules, New
// and SetRules with errors naming the rule, field and value; package rulesfile
// reads them from YAML and JSON files. SetRules replaces them at run time
// and keeps the counts of unchanged rules.
//
// The hot path is Enter and Exit:
//
//	e, err := guard.Enter(ctx, "GET /items/{id}")
//	if err != nil {
//		var b *core.BlockedError
//		if errors.As(err, &b) { /* 429, Retry-After: b.RetryAfter */ }
//		return
//	}
//	defer e.Exit(nil)
//
// With one flow rule, Enter reads the monotonic clock once, to decide and to
// time the request, Exit once more, so that a response time is true however
// busy the host is; they touch a handful of atomics and do not allocate,
// and neither does a block: requests rejected alike share one
// *BlockedError, which callers must not modify.
//
// Breaker rules (KindBreaker, package breaker) learn from the error Exit is
// given and the response time it measures; an open breaker blocks with a
// BlockedError of Kind KindBreaker. Their state changes go to listeners
// (WithBreakerListener) and to a rate-limited slog log (WithLogger), on a
// goroutine of the Guard, never on a request's.
//
// Adaptive rules (KindAdaptive) find a limit on requests in flight from
// their response times; system rules (KindSystem) shed requests while a
// signal of the service's load (Signal: its rate, requests in flight,
// response time, CPU usage, load average) is above a threshold, the host's
// signals read every half second on a goroutine of the Guard. Both shed
// the lower levels of requests first (Priority, WithPriority).
//
// A shadow rule (Rule.Shadow, or every rule with WithShadow) is evaluated
// and counted as if enforced but never blocks: RuleStats.Shadowed counts
// the requests it would have blocked, so that a limit can be watched before
// it is enforced.
//
// Snapshot returns the statistics of every resource (the last second, and
// totals since the Guard first saw it) and every rule (blocked requests,
// failure-policy decisions, breaker state), for metrics exporters (package
// prometheus) and the dashboard (package dashboard). History returns the
// last 10 minutes of them, a point a second, which the Guard keeps in fixed
// memory from History's first call.
//
// A Guard has no package-level state: its clock (package clock), rules,
// limiter state and statistics all hang off it.
package core
