package breaker

import pub "github.com/sluicekit/sluice/core/breaker"

// The names of package breaker, which the tests and examples write as this
// package's: a rule's Strategy, a breaker's State and Stats.
type (
	Strategy = pub.Strategy
	State    = pub.State
	Stats    = pub.Stats
)

// The values of package breaker.
const (
	SlowRatio  = pub.SlowRatio
	ErrorRatio = pub.ErrorRatio
	ErrorCount = pub.ErrorCount
	Closed     = pub.Closed
	Open       = pub.Open
	HalfOpen   = pub.HalfOpen
)
