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
// until the TAT minus their cost. Decide and Refund are that arithmetic on a
// TAT the caller guards (by a lock); Acquire and Undo apply them to an
// atomic TAT by compare-and-swap, a lost race retrying against the newer
// TAT, never against time.
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
	perNs     scale // Limit/Window
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
	lim, w := p.Limit, int64(p.Window)
	if lim <= 0 {
		return Decision{Limit: lim, RetryAfter: p.Window}, tat
	}
	capacity, cost1 := p.cp, p.cost1
	if !p.prepared {
		capacity, cost1 = p.capacity(), mulDiv(1, w, lim)
	}
	if n > lim+p.Burst {
		// Never fits; the quota left for requests of one is still reported.
		return Decision{Limit: lim, Remaining: p.remaining(now, tat, capacity), RetryAfter: p.Window}, tat
	}
	cost := cost1
	if n != 1 {
		cost = mulDiv(n, w, lim)
	}
	tol := capacity
	if p.Queue {
		tol += cost - cost1
	}
	next := max(tat, now) + cost
	if over := next - now - tol; over > 0 {
		return Decision{Limit: lim, Remaining: p.remaining(now, tat, capacity), RetryAfter: time.Duration(over)}, tat
	}
	d := Decision{OK: true, Limit: lim, Remaining: p.remaining(now, next, capacity), mark: next}
	if p.Queue {
		d.Wait = time.Duration(next - cost - now)
	}
	return d, next
}

// Acquire admits or rejects n at now against the TAT in tat: Decide, with
// the new TAT stored by compare-and-swap. A lost race decides again against
// the newer TAT.
func (p *GCRA) Acquire(tat *atomic.Int64, now, n int64) Decision {
	for {
		t := tat.Load()
		d, next := p.Decide(t, now, n)
		if next == t || tat.CompareAndSwap(t, next) {
			return d
		}
	}
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
