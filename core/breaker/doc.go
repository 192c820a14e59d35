// Package breaker names what a circuit breaker rule (core.KindBreaker) is
// configured with and reports: its Strategy, its State, and its Stats in a
// Guard's snapshot (core.RuleStats.Breaker).
//
// The breakers themselves are internal to core, whose documentation
// ("Circuit breakers") says what counts as a failure, and when a breaker
// trips, opens and closes:
//
//	core.Rule{Name: "payments", Resource: "POST /pay", Kind: core.KindBreaker,
//		Strategy: breaker.ErrorRatio, Threshold: 0.5, OpenFor: 5 * time.Second}
package breaker
