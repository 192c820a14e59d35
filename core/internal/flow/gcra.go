package flow

import (
	"math/bits"
	"sync"
	"sync/atomic"
	"time"
)

// GCRA is the arithmetic of a token or leaky bucket as the generic cell
// rate algorithm, over one state, the TAT: the time at which the bucket
// will be full again (token bucket) or its next free slot begins (leaky
// bucket, Queue). A request of n costs n*Window/Limit of TAT and fits while
// the TAT stays within the tolerance ahead of now: the capacity
// (Window+Burst*Window/Limit) for a token bucket, MaxWait plus the
// request's own cost for a leaky bucket, whose requests wait until the TAT
// minus their cost.
//
// Times are Instants, exact to 1/Limit ns (see the package doc). DecideAt
// decides on a TAT the caller guards by a lock (hotspot's per-value
// buckets, flow rules whose cost has a fraction); AcquireTo and Undo on an
// atomic TAT of whole nanoseconds by compare-and-swap, a lost race retrying
// against the newer TAT, never against time. The fraction dropped there
// lets such a bucket admit up to one request per
// Window/Limit-nanoseconds-rounded-down more than its rate, which matters
// only when Window/Limit is a few nanoseconds.
type GCRA struct {
	Limit   int64
	Window  time.Duration
	Burst   int64         // token bucket only
	MaxWait time.Duration // leaky bucket only
	Queue   bool          // leaky bucket: admitted requests wait for their slot

	// den is the denominator of the fractions, Limit when 0; a flow rule
	// that warms up uses its full limit at every limit of the ramp,
	// rounding costs up and tolerances down to it.
	den int64
	// Set by Prepare: the cost of one request, and the reciprocal that turns
	// time into requests without a division.
	prepared bool
	perNs    uint64   // reciprocal(Limit, Window)
	one      gcraCost // of one request
}

// Instant is a time or a duration of GCRA's arithmetic: NS nanoseconds plus
// Frac/den of one, 0 <= Frac < den, den the GCRA's denominator.
type Instant struct{ NS, Frac int64 }

// at returns the Instant of t nanoseconds.
func at(t int64) Instant { return Instant{NS: t} }

// Plus returns a+b, fractions in units of 1/den.
func (a Instant) Plus(b Instant, den int64) Instant {
	a.NS += b.NS
	if a.Frac += b.Frac; a.Frac >= den {
		a.Frac -= den
		a.NS++
	}
	return a
}

// Minus returns a-b, fractions in units of 1/den.
func (a Instant) Minus(b Instant, den int64) Instant {
	a.NS -= b.NS
	if a.Frac -= b.Frac; a.Frac < 0 {
		a.Frac += den
		a.NS--
	}
	return a
}

// After reports whether a is later than b.
func (a Instant) After(b Instant) bool { return a.NS > b.NS || a.NS == b.NS && a.Frac > b.Frac }

// Ceil returns a rounded up to a whole nanosecond.
func (a Instant) Ceil() int64 {
	if a.Frac > 0 {
		return a.NS + 1
	}
	return a.NS
}

// Prepare returns p with the values a decision derives from its fields
// computed once; changing a field requires preparing it again.
func (p GCRA) Prepare() GCRA {
	p.prepared = false
	if p.Limit > 0 {
		p.perNs = reciprocal(p.Limit, int64(p.Window))
		p.one = p.costOfMany(1)
		p.prepared = true
	}
	return p
}

// denom returns the denominator of p's fractions.
func (p *GCRA) denom() int64 {
	if p.den > 0 {
		return p.den
	}
	return p.Limit
}

// share returns x*Window/Limit as an Instant, rounded up (a cost) or down
// (a tolerance) to a unit of 1/den when den is not Limit; it saturates at
// 2^62 nanoseconds, beyond any span Config allows.
func (p *GCRA) share(x int64, up bool) Instant {
	lim := uint64(p.Limit)
	hi, lo := bits.Mul64(uint64(x), uint64(p.Window))
	if hi >= lim {
		return at(1 << 62)
	}
	q, r := bits.Div64(hi, lo, lim)
	if q >= 1<<62 {
		return at(1 << 62)
	}
	den := uint64(p.denom())
	if den == lim || r == 0 {
		return Instant{int64(q), int64(r)}
	}
	fh, fl := bits.Mul64(r, den)
	f, fr := bits.Div64(fh, fl, lim)
	if up && fr != 0 {
		if f++; f == den {
			q, f = q+1, 0
		}
	}
	return Instant{int64(q), int64(f)}
}

// DecideAt decides n at now against a bucket whose TAT is tat, writing
// every field of the decision to d, and returns the TAT after it: tat
// itself when rejected. Without quota, the caller reads no quota of an
// admitted decision: its Remaining and Next are left 0 (a rejection's are
// always set).
func (p *GCRA) DecideAt(d *Decision, tat Instant, now, n int64, quota bool) Instant {
	var buf gcraCost
	c := p.costOf(n, &buf)
	next, over := c.advance(tat, now, p.denom())
	p.outcome(d, c, tat, next, now, over, quota)
	if over.After(Instant{}) {
		return tat
	}
	return next
}

// Cost returns the TAT n requests take: n*Window/Limit, rounded up.
func (p *GCRA) Cost(n int64) Instant { return p.share(n, true) }

// Next returns the time after which a request of one fits when the TAT is
// tat, rounded up to a nanosecond, 0 when it fits at now: the Next of an
// admitted decision that leaves no quota, the RetryAfter of a request of
// one rejected at now.
func (p *GCRA) Next(now int64, tat Instant) time.Duration {
	var buf gcraCost
	_, over := p.costOf(1, &buf).advance(tat, now, p.denom())
	return time.Duration(max(over.Ceil(), 0))
}

// AcquireTo is DecideAt on the TAT in tat, the new TAT stored by
// compare-and-swap. Only the step that depends on the TAT is in the loop,
// so that the window in which another goroutine can make the swap fail is
// short; a lost race decides again against the newer TAT.
func (p *GCRA) AcquireTo(d *Decision, tat *atomic.Int64, now, n int64) {
	var buf gcraCost
	c := p.costOf(n, &buf)
	den := p.denom()
	for {
		t := tat.Load()
		next, over := c.advance(at(t), now, den)
		if over.After(Instant{}) || tat.CompareAndSwap(t, next.NS) {
			p.outcome(d, c, at(t), next, now, over, true)
			return
		}
	}
}

// gcraCost is the part of a decision of n requests that does not depend on
// the TAT.
type gcraCost struct {
	capacity Instant // see GCRA.Capacity
	cost     Instant // the TAT n requests take
	tol      Instant // how far ahead of now the TAT may be after them (Window if !fits)
	fits     bool    // false: rejected whatever the TAT (limit 0, or n above the bucket's size)
}

// costOf returns the cost of n requests: p's own for one request of a
// prepared p (the common case), else computed in buf.
func (p *GCRA) costOf(n int64, buf *gcraCost) *gcraCost {
	if n == 1 && p.prepared {
		return &p.one
	}
	*buf = p.costOfMany(n)
	return buf
}

// costOfMany is costOf's general case.
func (p *GCRA) costOfMany(n int64) (c gcraCost) {
	c.tol = at(int64(p.Window))
	if p.Limit <= 0 {
		return c
	}
	if c.capacity = p.Capacity(); n > p.Limit+p.Burst {
		return c
	}
	c.cost = p.share(n, true)
	c.tol = c.capacity
	if p.Queue {
		c.tol = at(int64(p.MaxWait)).Plus(c.cost, p.denom()) // a leaky bucket's request waits for its own slot
	}
	c.fits = true
	return c
}

// advance returns the TAT after the requests of c at now against tat, and
// by how much it is beyond the tolerance: they fit when over <= 0. Those
// that never fit are rejected for a window.
func (c *gcraCost) advance(tat Instant, now, den int64) (next, over Instant) {
	if !c.fits {
		return tat, c.tol
	}
	if tat.NS < now {
		tat = at(now)
	}
	next = tat.Plus(c.cost, den)
	return next, next.Minus(at(now), den).Minus(c.tol, den)
}

// outcome writes to d the decision of advance's next and over for the
// requests of c at now against tat (with a limit of 0 or a request larger
// than the bucket, over is Window). Waits and hints are rounded up to a
// nanosecond: never early. quota is DecideAt's.
func (p *GCRA) outcome(d *Decision, c *gcraCost, tat, next Instant, now int64, over Instant, quota bool) {
	if over.After(Instant{}) {
		*d = Decision{Limit: p.Limit, Remaining: p.remaining(now, tat, c.capacity), RetryAfter: time.Duration(over.Ceil())}
		return
	}
	var wait time.Duration
	if p.Queue {
		wait = time.Duration(next.Minus(c.cost, p.denom()).Ceil() - now)
	}
	// Field by field: a composite literal is built on the stack and copied,
	// which stalls on reading back what was just written.
	d.OK, d.Wait, d.Limit, d.Remaining, d.RetryAfter, d.Next = true, wait, p.Limit, 0, 0, 0
	if quota {
		if d.Remaining = p.remaining(now, next, c.capacity); d.Remaining == 0 {
			d.Next = p.Next(now, next)
		}
	}
	d.ref, d.mark, d.markFrac = nil, next.NS, next.Frac
}

// Capacity returns how far ahead of now the TAT may be for one more request
// of one to fit: a token bucket's size as time (Window plus the refill of
// Burst), a leaky bucket's MaxWait plus one request's cost.
func (p *GCRA) Capacity() Instant {
	if p.Queue {
		return at(int64(p.MaxWait)).Plus(p.share(1, true), p.denom())
	}
	return at(int64(p.Window)).Plus(p.share(p.Burst, false), p.denom())
}

// remaining returns how many requests of one fit when the TAT is t, rounded
// down.
func (p *GCRA) remaining(now int64, t, capacity Instant) int64 {
	if t.NS < now {
		t = at(now)
	}
	left := capacity.Minus(t.Minus(at(now), p.denom()), p.denom())
	if left.NS < 0 {
		return 0
	}
	if p.denom() != p.Limit {
		left.Frac = 0 // of another denominator (warming up): rounded down
	}
	if p.prepared {
		switch {
		case p.perNs != 0:
			// No division: q is (left*Limit + Frac)/Window or up to two
			// less (Limit < Window, Frac < Limit), and the remainder of
			// that, below 3*Window (Window <= MaxSpan), is exact in 64
			// bits.
			q, _ := bits.Mul64(uint64(left.NS), p.perNs)
			w := uint64(p.Window)
			for r := uint64(left.NS)*uint64(p.Limit) + uint64(left.Frac) - q*w; r >= w; r -= w {
				q++
			}
			return int64(q)
		case p.Limit == int64(p.Window) && left.Frac == 0:
			return left.NS // one per nanosecond
		}
	}
	// left*Limit/Window with left's fraction: (left.NS*Limit + Frac)/Window,
	// at most Limit+Burst.
	hi, lo := bits.Mul64(uint64(left.NS), uint64(p.Limit))
	lo, c := bits.Add64(lo, uint64(left.Frac), 0)
	if hi += c; hi == 0 {
		return int64(lo / uint64(p.Window)) // a 64-bit division: faster
	}
	if hi >= uint64(p.Window) {
		return 1<<63 - 1
	}
	q, _ := bits.Div64(hi, lo, uint64(p.Window))
	return int64(q)
}

// Undo gives the cost of an admitted decision d of n back to tat, by
// compare-and-swap; a rejected one is ignored. A token bucket subtracts
// the cost, exact unless the bucket ran full again since (Undo normally
// follows at once). A leaky bucket only rewinds when d's slot was the last
// one taken (gcra also reuses the others: see gcra).
func (p *GCRA) Undo(tat *atomic.Int64, d Decision, n int64) {
	if !d.OK {
		return
	}
	q := *p
	q.Limit = d.Limit
	cost := q.share(n, true)
	end := d.Mark()
	for {
		t := tat.Load()
		next := t
		switch {
		case !p.Queue:
			next = t - cost.NS
		case t == end.NS:
			next = end.Minus(cost, q.denom()).NS
		}
		if next == t || tat.CompareAndSwap(t, next) {
			return
		}
	}
}

// gcra is the Limiter of TokenBucket and LeakyBucket flow rules: one GCRA
// over one bucketState, with the limit of the warm-up ramp when there is
// one, deciding by GCRA.AcquireTo's compare-and-swap or, when the TAT
// keeps a fraction, under the state's mutex; a leaky bucket's slots given
// back become holes (see the package doc).
type gcra struct {
	base
	st     *bucketState
	full   GCRA // the parameters at the full limit, prepared
	locked bool // the TAT has a fraction: every decision holds st.mu
}

// maxHoles bounds the holes a leaky bucket remembers; a slot given back
// beyond it is forgotten (left empty), which errs on the strict side.
const maxHoles = 1024

// bucketState is the TAT of a flow rule's bucket, carried over on reload.
type bucketState struct {
	tat atomic.Int64 // whole nanoseconds of the TAT
	mu  sync.Mutex
	// Guarded by mu: the fraction of the TAT (frac/den ns, zero unless
	// locked), and a leaky bucket's holes, all of Owner 0.
	frac, den int64
	holes     Holes
	nholes    atomic.Int32 // len(holes.List), read without mu
}

// load returns the TAT. A fraction written with another denominator than
// den (by the rule before a reload) is first rounded up in the state, so
// that swap compares with what is stored. The caller holds mu.
func (s *bucketState) load(den int64) Instant {
	if s.frac > 0 && s.den != den {
		for t := s.tat.Load(); !s.tat.CompareAndSwap(t, t+1); t = s.tat.Load() {
		}
		s.frac = 0
	}
	return Instant{s.tat.Load(), s.frac}
}

// swap replaces the TAT old by t, unless a decision made without mu
// changed it since. The caller holds mu.
func (s *bucketState) swap(old, t Instant, den int64) bool {
	if !s.tat.CompareAndSwap(old.NS, t.NS) {
		return false
	}
	s.frac, s.den = t.Frac, den
	return true
}

func newGCRA(b base, prev Limiter) *gcra {
	g, cfg := &gcra{base: b}, b.cfg
	g.locked = cfg.Limit > 0 && (int64(cfg.Window)%cfg.Limit != 0 || b.warm != nil)
	g.full = g.params(cfg.Limit).Prepare()
	p, ok := prev.(*gcra)
	if !ok {
		g.st = new(bucketState)
		return g
	}
	g.st = p.st // a token bucket's TAT and a leaky bucket's are one arithmetic
	g.st.mu.Lock()
	defer g.st.mu.Unlock()
	if p.cfg.Algorithm != cfg.Algorithm {
		g.st.holes.Forget(0)
		g.st.nholes.Store(0)
	}
	if !g.locked {
		g.st.load(0) // rounded up: decisions without the mutex see whole nanoseconds
	}
	if p.cfg.Limit != cfg.Limit {
		g.st.holes.Round(nil) // their fractions were of another denominator
		g.st.nholes.Store(int32(len(g.st.holes.List)))
	}
	return g
}

func (g *gcra) params(lim int64) GCRA {
	return GCRA{Limit: lim, Window: g.cfg.Window, Burst: g.cfg.Burst, MaxWait: g.cfg.MaxWait, Queue: g.cfg.Algorithm == LeakyBucket, den: g.cfg.Limit}
}

func (g *gcra) Acquire(now int64, n int64) (d Decision) {
	g.AcquireTo(&d, now, n)
	return d
}

// AcquireTo is Acquire writing the decision to d (see flow.AcquireTo).
func (g *gcra) AcquireTo(d *Decision, now, n int64) {
	p := &g.full
	if lim := g.limitAt(now); lim != p.Limit {
		warm := g.params(lim) // warming up
		p = &warm
	}
	if g.locked || g.st.nholes.Load() > 0 && g.st.tat.Load() > now {
		g.st.mu.Lock()
		g.acquireLocked(d, p, now, n)
		g.st.mu.Unlock()
	} else {
		p.AcquireTo(d, &g.st.tat, now, n)
	}
	if d.OK {
		g.admitted(n)
	}
}

// acquireLocked is AcquireTo under st.mu: the earliest hole that holds the
// requests, else DecideAt's arithmetic on the TAT with its fraction.
func (g *gcra) acquireLocked(d *Decision, p *GCRA, now, n int64) {
	var buf gcraCost
	s, den, c := g.st, p.denom(), p.costOf(n, &buf)
	for {
		t := s.load(den)
		retry := time.Duration(-1)
		if c.fits && p.Queue && len(s.holes.List) > 0 && t.NS >= now {
			var taken bool
			taken, retry, _ = s.holes.Take(d, p, 0, t, now, n)
			s.nholes.Store(int32(len(s.holes.List)))
			if taken {
				return
			}
		}
		next, over := c.advance(t, now, den)
		if rejected := over.After(Instant{}); rejected || s.swap(t, next, den) {
			p.outcome(d, c, t, next, now, over, true)
			if rejected && retry >= 0 {
				d.RetryAfter = min(d.RetryAfter, retry) // a hole comes sooner
			}
			return
		}
	}
}

func (g *gcra) Undo(d Decision, n int64) {
	if !d.OK {
		return
	}
	g.undone(n)
	p := g.params(d.Limit)
	if !g.locked && !p.Queue {
		p.Undo(&g.st.tat, d, n) // a token bucket's tokens, by compare-and-swap
		return
	}
	s, den, end := g.st, p.denom(), d.Mark()
	cost := p.share(n, true)
	s.mu.Lock()
	defer s.mu.Unlock()
	if p.Queue {
		// The slot back (Holes.Free). A decision without mu may take a
		// slot meanwhile only when there are no holes or the TAT has
		// passed (and with it the holes Free rewinds over): comparing
		// again is exact.
		for from, t := end.Minus(cost, den), s.load(den); ; t = s.load(den) {
			next := t
			if s.holes.Free(0, &next, from, end, maxHoles, nil); next == t || s.swap(t, next, den) {
				break
			}
		}
		s.nholes.Store(int32(len(s.holes.List)))
		return
	}
	for t := s.load(den); !s.swap(t, t.Minus(cost, den), den); t = s.load(den) {
	}
}
