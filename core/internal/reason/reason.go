// Package reason lists the reasons a Guard blocks a request for, the keys
// of core.Totals.BlockedBy, so that core counts by them and core/prometheus
// and core/otel label their series with them, from one list.
package reason

// The reasons' indexes in Names.
const (
	Flow = iota
	Concurrency
	Hotspot
	Breaker
	Fallback
	Cancelled
	Adaptive
	System
	// N is the number of reasons.
	N
)

// Names are the reasons by index, in a fixed order: the names of the rule
// kinds (core.KindFlow, ...), "fallback" (core.ReasonFallback) and
// "cancelled" (core.ReasonCancelled). It is never modified.
var Names = [N]string{
	Flow:        "flow",
	Concurrency: "concurrency",
	Hotspot:     "hotspot",
	Breaker:     "breaker",
	Fallback:    "fallback",
	Cancelled:   "cancelled",
	Adaptive:    "adaptive",
	System:      "system",
}
