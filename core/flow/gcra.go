package flow

import (
	"sync/atomic"
	"time"
)

// GCRA is the arithmetic of a token bucket or leaky bucket as the generic
// cell rate algorithm, over one int64 of state, the TAT: the time at which
// the bucket will be full again (token bucket) or the next free slot begins
// (leaky bucket). A request of n costs n*Window/Limit nanoseconds of TAT and
// fits while the TAT stays within the tolerance ahead of now:
// Window+Burst*Window/Limit for a token bucket (its capacity), MaxWait plus
// the request's own cost for a leaky bucket (Queue), whose requests wait
// until the TAT minus their cost. Decide (or DecideTo) and Refund are that
// arithmetic on a TAT the caller guards (by a lock); Acquire and Undo apply
// the same arithmetic to an atomic TAT by compare-and-swap, a lost race
// retrying against the newer TAT, never against time.
//
// Flow rules of TokenBucket and LeakyBucket use it, and so do per-value
// (hotspot) buckets, which keep one TAT per value.
type GCRA struct {
	Limit   int64
	Window  time.Duration
	Burst   int64         // token bucket only
	MaxWait time.Duration // leaky bucket only
	Queue   bool          // leaky bucket: admitted requests wait for their slot

	// Set by Prepare: the cost of one request and the capacity, which
	// Decide otherwise computes, each with a 128-bit division, per call,
	// and the scale that turns time into requests without a division.
	prepared  bool
	cost1, cp int64
	perNs     scale    // Limit/Window
	one       gcraCost // the cost of one request
}

// Prepare returns p with the values Decide derives from its fields
// computed once. A GCRA used for many decisions with the same fields (one
// per hotspot override, say) is prepared once; changing a field of a
// prepared GCRA requires preparing it again.
func (p GCRA) Prepare() GCRA {
	p.prepared = false
	if p.Limit > 0 {
		p.cost1 = mulDiv(1, int64(p.Window), p.Limit)
		p.cp = p.capacity()
		p.perNs = newScale(p.Limit, int64(p.Window))
		p.one = p.costOfMany(1)
		p.prepared = true
	}
	return p
}

// Decide is the arithmetic of Acquire without the atomic: it decides n at
// now against a bucket whose TAT is tat and returns the decision with the
// TAT after it (tat itself when rejected). Acquire applies it by
// compare-and-swap; a caller that guards the TAT by a lock stores the TAT
// Decide returns instead.
func (p *GCRA) Decide(tat, now, n int64) (Decision, int64) {
	var d Decision
	next := p.DecideTo(&d, tat, now, n)
	return d, next
}

// DecideTo is Decide writing the decision to d, every field of it, and
// returning the TAT after it: a Decision returned by a function is copied
// through memory, which costs more than its size suggests, and a caller
// that keeps decisions in place (hotspot's records, say) saves the copy.
func (p *GCRA) DecideTo(d *Decision, tat, now, n int64) int64 {
	c := p.costOf(n)
	if !c.fits {
		p.never(d, &c, tat, now)
		return tat
	}
	next, over := c.advance(tat, now)
	p.outcome(d, &c, tat, next, now, over)
	if over > 0 {
		return tat
	}
	return next
}

// Acquire admits or rejects n at now against the TAT in tat: Decide's
// arithmetic, with the new TAT stored by compare-and-swap. Only the step
// that depends on the TAT is inside the loop, so that the window in which
// another goroutine can make the swap fail is short; a lost race decides
// again against the newer TAT.
func (p *GCRA) Acquire(tat *atomic.Int64, now, n int64) Decision {
	var d Decision
	c := p.costOf(n)
	if !c.fits {
		p.never(&d, &c, tat.Load(), now)
		return d
	}
	for {
		t := tat.Load()
		next, over := c.advance(t, now)
		if over > 0 || tat.CompareAndSwap(t, next) {
			p.outcome(&d, &c, t, next, now, over)
			return d
		}
	}
}

// gcraCost is the part of a decision of n requests that does not depend on
// the TAT.
type gcraCost struct {
	lim      int64
	capacity int64 // see GCRA.capacity
	cost     int64 // the TAT n requests take
	tol      int64 // how far ahead of now the TAT may be after them
	// fits is false when the requests are rejected whatever the TAT: the
	// limit is 0, or they are more than the bucket holds.
	fits bool
}

// costOf returns the cost of n requests.
func (p *GCRA) costOf(n int64) gcraCost {
	if n == 1 && p.prepared {
		return p.one // the common case, in line
	}
	return p.costOfMany(n)
}

// costOfMany is costOf's general case.
func (p *GCRA) costOfMany(n int64) (c gcraCost) {
	lim, w := p.Limit, int64(p.Window)
	c.lim = lim
	if lim <= 0 {
		return c
	}
	cost1 := p.cost1
	c.capacity = p.cp
	if !p.prepared {
		c.capacity, cost1 = p.capacity(), mulDiv(1, w, lim)
	}
	if n > lim+p.Burst {
		return c
	}
	c.cost = cost1
	if n != 1 {
		c.cost = mulDiv(n, w, lim)
	}
	c.tol = c.capacity
	if p.Queue {
		c.tol += c.cost - cost1 // a leaky bucket's request waits for its own slot
	}
	c.fits = true
	return c
}

// advance returns the TAT after the requests of c at now against tat, and
// by how much it is beyond the tolerance: they fit when over <= 0.
func (c *gcraCost) advance(tat, now int64) (next, over int64) {
	next = max(tat, now) + c.cost
	return next, next - now - c.tol
}

// outcome writes to d the decision of the requests of c at now: admitted,
// the TAT going from tat to next, when over <= 0, else rejected.
func (p *GCRA) outcome(d *Decision, c *gcraCost, tat, next, now, over int64) {
	if over > 0 {
		*d = Decision{Limit: c.lim, Remaining: p.remaining(now, tat, c.capacity), RetryAfter: time.Duration(over)}
		return
	}
	var wait time.Duration
	if p.Queue {
		wait = time.Duration(next - c.cost - now)
	}
	*d = Decision{OK: true, Wait: wait, Limit: c.lim, Remaining: p.remaining(now, next, c.capacity), mark: next}
}

// never writes to d the decision of requests that costOf found never fit.
// The quota left for requests of one is still reported.
func (p *GCRA) never(d *Decision, c *gcraCost, tat, now int64) {
	if c.lim <= 0 {
		*d = Decision{Limit: c.lim, RetryAfter: p.Window}
		return
	}
	*d = Decision{Limit: c.lim, Remaining: p.remaining(now, tat, c.capacity), RetryAfter: p.Window}
}

// capacity returns how far ahead of now the TAT may be for one more request
// of one to fit: the bucket's size as time for a token bucket, MaxWait plus
// one request's cost for a leaky bucket.
func (p *GCRA) capacity() int64 {
	w := int64(p.Window)
	if p.Queue {
		return int64(p.MaxWait) + mulDiv(1, w, p.Limit)
	}
	return w + mulDiv(p.Burst, w, p.Limit)
}

// remaining returns how many requests of one fit when the TAT is t.
func (p *GCRA) remaining(now, t, capacity int64) int64 {
	ahead := max(t-now, 0)
	if ahead >= capacity {
		return 0
	}
	if p.prepared {
		return p.perNs.of(capacity - ahead)
	}
	return mulDiv(capacity-ahead, p.Limit, int64(p.Window))
}

// Refund is the arithmetic of Undo without the atomic: it returns the TAT
// tat after the cost of an admitted decision d of n is given back (tat
// itself for a rejected decision, or a leaky bucket's slot that was not the
// last one taken).
func (p *GCRA) Refund(tat int64, d Decision, n int64) int64 {
	if !d.OK {
		return tat
	}
	cost := mulDiv(n, int64(p.Window), d.Limit)
	switch {
	case !p.Queue:
		return tat - cost
	case tat == d.mark:
		return d.mark - cost
	}
	return tat
}

// Undo gives the cost of an admitted decision d of n back to tat (Refund,
// stored by compare-and-swap); a rejected decision reserved nothing and is
// ignored. A token bucket subtracts the cost, which is exact unless the
// bucket ran full again between Acquire and Undo (the tokens given back then
// exceed what overflowed; Undo normally follows Acquire at once). A leaky
// bucket only rewinds when no later request took a slot after this one:
// later slots are promised, so the freed slot is otherwise left empty.
func (p *GCRA) Undo(tat *atomic.Int64, d Decision, n int64) {
	for {
		t := tat.Load()
		next := p.Refund(t, d, n)
		if next == t || tat.CompareAndSwap(t, next) {
			return
		}
	}
}

// gcra is the Limiter of TokenBucket and LeakyBucket flow rules: one GCRA
// over one TAT, with the limit of the warm-up ramp when there is one.
type gcra struct {
	cfg  Config
	th   threshold
	tat  *atomic.Int64
	full GCRA // the parameters at the full limit, prepared
}

func newGCRA(cfg Config, th threshold, prev Limiter) *gcra {
	g := &gcra{cfg: cfg, th: th}
	g.full = g.params(cfg.Limit).Prepare()
	if p, ok := prev.(*gcra); ok && p.cfg.Algorithm == cfg.Algorithm {
		g.tat = p.tat
	} else {
		g.tat = new(atomic.Int64)
	}
	return g
}

func (g *gcra) Config() Config        { return g.cfg }
func (g *gcra) warmState() *warmState { return warmStateOf(g.th) }

func (g *gcra) params(lim int64) GCRA {
	return GCRA{Limit: lim, Window: g.cfg.Window, Burst: g.cfg.Burst, MaxWait: g.cfg.MaxWait, Queue: g.cfg.Algorithm == LeakyBucket}
}

func (g *gcra) AcquireOn(_ uint32, now, n int64) Decision { return g.Acquire(now, n) }

func (g *gcra) Acquire(now int64, n int64) Decision {
	p := &g.full
	if lim := g.th.at(now); lim != p.Limit {
		warm := g.params(lim) // warming up
		p = &warm
	}
	d := p.Acquire(g.tat, now, n)
	if d.OK {
		g.th.admitted(n)
	}
	return d
}

func (g *gcra) Undo(d Decision, n int64) {
	p := g.params(d.Limit)
	p.Undo(g.tat, d, n)
}
