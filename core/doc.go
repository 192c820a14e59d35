// Package core is the sluice engine: a Guard holds flow, concurrency (and,
// later, hotspot) rules and decides, per request, whether a resource may
// take more traffic.
//
// A resource is the name of a protected thing: a route template such as
// "GET /items/{id}", or a gRPC method such as "/pkg.Service/Method". Rules
// name the resources they limit exactly or by a glob ("GET /items/*", "*");
// every rule that matches a resource applies, and a request passes only if
// all pass. Rules are Go values (Rule) or come from a YAML or JSON file
// (LoadRulesFile); SetRules replaces them at run time and keeps the counts
// of unchanged rules.
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
// With one flow rule, Enter and Exit together read the clock twice (once to
// decide, once for the response time; on the system clock, a coarse clock
// that costs an atomic load: see RTResolution), touch a handful of atomics
// and do not allocate; a block allocates only the *BlockedError.
//
// A Guard has no package-level state: its clock (package clock), rules,
// limiter state and statistics all hang off it.
package core
