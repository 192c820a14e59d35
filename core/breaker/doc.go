// Package breaker names what a circuit breaker rule (core.KindBreaker) is
// configured with and reports: its Strategy, its State, and its Stats in a
// Guard's snapshot (core.RuleStats.Breaker).
//
// A breaker is closed (it lets requests through and watches their
// outcomes), open (it rejects every request for the rule's OpenFor), or
// half-open (it lets the rule's Probes through, closes when all of them
// succeed, and opens again as soon as one fails). The breakers themselves
// are internal to core, whose documentation ("Circuit breakers") says what
// counts as a failure, and when a breaker trips and closes:
//
//	core.Rule{Name: "payments", Resource: "POST /pay", Kind: core.KindBreaker,
//		Strategy: breaker.ErrorRatio, Threshold: 0.5, OpenFor: 5 * time.Second}
package breaker
