package concurrency

import (
	"sync/atomic"

	"github.com/sluicekit/sluice/core/stripe"
)

// Limiter bounds the number of requests in flight (see the package doc).
// The zero value is not usable: call New.
type Limiter struct {
	limit int64
	s     *state
}

// state is the count of a rule's slots, shared by its Limiters across reloads.
type state struct {
	taken atomic.Int64 // the slots taken: in flight, and free in a CPU's lease
	// limit is the limit of the rule's newest Limiter: requests admitted
	// under an older one release their slots to leases only while it
	// leaves room, so that a lowered limit takes hold.
	limit  atomic.Int64
	leases []lease // one per stripe
	room   int64   // the slots not taken from which CPUs keep free slots (stripe.MinLeased)
}

// lease is the free slots one CPU keeps, on a cache line of its own.
type lease struct {
	free atomic.Int64
	_    [56]byte
}

const maxLease = stripe.MaxLease // the most free slots a CPU keeps (what it takes at once: stripe.LeaseSize)

// New returns a Limiter allowing limit requests in flight. When prev is the
// Limiter of the same rule before a rule reload, the in-flight count is
// shared with it, so requests admitted under the old rule are still counted
// and released against the new one; the free slots CPUs kept under the old
// limit are given back.
func New(limit int64, prev *Limiter) *Limiter {
	l := &Limiter{limit: limit}
	if prev != nil {
		l.s = prev.s
		l.s.limit.Store(limit)
		for i := range l.s.leases {
			if f := l.s.leases[i].free.Swap(0); f > 0 {
				l.s.taken.Add(-f)
			}
		}
	} else {
		n := stripe.Count()
		l.s = &state{leases: make([]lease, n), room: stripe.MinLeased(n)}
		l.s.limit.Store(limit)
	}
	return l
}

// Limit returns the limit.
func (l *Limiter) Limit() int64 { return l.limit }

// InFlight returns the number of requests in flight: the slots taken, less
// those free in CPUs' leases.
func (l *Limiter) InFlight() int64 {
	var free int64
	for i := range l.s.leases {
		free += l.s.leases[i].free.Load()
	}
	return max(l.s.taken.Load()-free, 0)
}

// AcquireOn takes n slots if they fit, for a caller on the CPU cpu: any
// number, the same for the callers on one CPU (the Guard passes the stripe
// of the processor its goroutine runs on); the limit holds whatever cpu is,
// and a rejected request is not counted. It reports whether it took them.
func (l *Limiter) AcquireOn(cpu uint32, n int64) bool {
	ls := &l.s.leases[stripe.Of(cpu, len(l.s.leases))]
	if f := ls.free.Load(); f >= n && ls.free.CompareAndSwap(f, f-n) {
		return true
	}
	if n > l.limit {
		return false
	}
	// v < n and t < chunk: the sum wrapped past 2^63 (a limit near it).
	v := l.s.taken.Add(n)
	if v > l.limit || v < n {
		l.s.taken.Add(-n)
		return false
	}
	lim := min(l.limit, l.s.limit.Load())
	if chunk := stripe.LeaseSize(lim-v, len(l.s.leases)); chunk > 0 {
		if t := l.s.taken.Add(chunk); t <= lim && t >= chunk {
			ls.free.Add(chunk)
		} else {
			l.s.taken.Add(-chunk)
		}
	}
	return true
}

// ReleaseOn gives back n slots taken by AcquireOn, by a caller on the CPU
// cpu: to the CPU's lease while the rule's newest limit leaves room (see
// the package doc), else to the shared count.
func (l *Limiter) ReleaseOn(cpu uint32, n int64) {
	ls := &l.s.leases[stripe.Of(cpu, len(l.s.leases))]
	if f := ls.free.Load(); n <= maxLease-f && l.s.limit.Load()-l.s.taken.Load() >= l.s.room {
		ls.free.Add(n)
		return
	}
	l.s.taken.Add(-n)
}
