package flow

import (
	"sync/atomic"
	"time"
)

// gcra implements TokenBucket and LeakyBucket as the generic cell rate
// algorithm: one int64, tat, the time at which the bucket will be full again
// (token bucket) or the next free slot begins (leaky bucket). A request of n
// costs n*Window/limit nanoseconds of tat and fits while tat stays within the
// tolerance ahead of now: Window+Burst*Window/limit for a token bucket (its
// capacity), MaxWait plus the request's own cost for a leaky bucket, whose
// requests wait until tat minus their cost.
type gcra struct {
	cfg   Config
	th    threshold
	tat   *atomic.Int64
	queue bool // LeakyBucket: admitted requests wait for their slot
}

func newGCRA(cfg Config, th threshold, prev Limiter) *gcra {
	g := &gcra{cfg: cfg, th: th, queue: cfg.Algorithm == LeakyBucket}
	if p, ok := prev.(*gcra); ok && p.queue == g.queue {
		g.tat = p.tat
	} else {
		g.tat = new(atomic.Int64)
	}
	return g
}

func (g *gcra) Config() Config        { return g.cfg }
func (g *gcra) warmState() *warmState { return warmStateOf(g.th) }

func (g *gcra) Acquire(now int64, n int64) Decision {
	lim := g.th.at(now)
	w := int64(g.cfg.Window)
	if lim <= 0 {
		return Decision{Limit: lim, RetryAfter: g.cfg.Window}
	}
	capacity := g.capacity(w, lim)
	if n > lim+g.cfg.Burst {
		// Never fits; the quota left for requests of one is still reported.
		return Decision{Limit: lim, Remaining: g.remaining(now, g.tat.Load(), capacity, w, lim), RetryAfter: g.cfg.Window}
	}
	cost := mulDiv(n, w, lim)
	tol := capacity
	if g.queue {
		tol += cost - mulDiv(1, w, lim)
	}
	for {
		t := g.tat.Load()
		next := max(t, now) + cost
		if over := next - now - tol; over > 0 {
			return Decision{Limit: lim, Remaining: g.remaining(now, t, capacity, w, lim), RetryAfter: time.Duration(over)}
		}
		if g.tat.CompareAndSwap(t, next) {
			g.th.admitted(n)
			d := Decision{OK: true, Limit: lim, Remaining: g.remaining(now, next, capacity, w, lim), mark: next}
			if g.queue {
				d.Wait = time.Duration(next - cost - now)
			}
			return d
		}
	}
}

// capacity returns how far ahead of now tat may be for one more request of
// one to fit: the bucket's size as time for a token bucket, MaxWait plus one
// request's cost for a leaky bucket.
func (g *gcra) capacity(w, lim int64) int64 {
	if g.queue {
		return int64(g.cfg.MaxWait) + mulDiv(1, w, lim)
	}
	return w + mulDiv(g.cfg.Burst, w, lim)
}

// remaining returns how many requests of one fit when the bucket's tat is t.
func (g *gcra) remaining(now, t, capacity, w, lim int64) int64 {
	ahead := max(t-now, 0)
	if ahead >= capacity {
		return 0
	}
	return mulDiv(capacity-ahead, lim, w)
}

// Undo gives the reservation's cost back; a rejected decision reserved
// nothing and is ignored. A token bucket subtracts the cost, which is exact
// unless the bucket ran full again between Acquire and Undo (the tokens given
// back then exceed what overflowed; Undo normally follows Acquire at once). A
// leaky bucket only rewinds when no later request took a slot after this
// one: later slots are promised, so the freed slot is otherwise left empty.
func (g *gcra) Undo(d Decision, n int64) {
	if !d.OK {
		return
	}
	cost := mulDiv(n, int64(g.cfg.Window), d.Limit)
	if !g.queue {
		g.tat.Add(-cost)
		return
	}
	g.tat.CompareAndSwap(d.mark, d.mark-cost)
}
