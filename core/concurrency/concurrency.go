package concurrency

import "sync/atomic"

// Limiter bounds the number of requests in flight. It reserves first and
// checks after (add, compare, undo on failure), so any number of goroutines
// together never hold more than the limit. The zero value is not usable: call
// New.
type Limiter struct {
	limit    int64
	inFlight *atomic.Int64
}

// New returns a Limiter allowing limit requests in flight. When prev is the
// Limiter of the same rule before a rule reload, the in-flight count is
// shared with it, so requests admitted under the old rule are still counted
// and released against the new one.
func New(limit int64, prev *Limiter) *Limiter {
	l := &Limiter{limit: limit}
	if prev != nil {
		l.inFlight = prev.inFlight
	} else {
		l.inFlight = new(atomic.Int64)
	}
	return l
}

// Limit returns the limit.
func (l *Limiter) Limit() int64 { return l.limit }

// InFlight returns the number of requests in flight.
func (l *Limiter) InFlight() int64 { return l.inFlight.Load() }

// Acquire takes n slots if they fit and reports whether they did, with the
// number in flight after the decision (without the n when rejected).
func (l *Limiter) Acquire(n int64) (ok bool, inFlight int64) {
	v := l.inFlight.Add(n)
	if v <= l.limit {
		return true, v
	}
	return false, l.inFlight.Add(-n)
}

// Release gives back n slots taken by Acquire.
func (l *Limiter) Release(n int64) { l.inFlight.Add(-n) }
