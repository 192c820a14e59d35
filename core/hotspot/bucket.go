package hotspot

import (
	"math/bits"
	"time"

	"github.com/sluicekit/sluice/core/flow"
)

// instant is a time or a span of a value's bucket: ns nanoseconds plus
// frac/lim of one, 0 <= frac < lim, lim the value's limit. One request
// costs Window/lim nanoseconds, which is a whole number of units of 1/lim
// ns, so a bucket's TAT, kept as an instant, is exact at any rate: 3 per
// second, or 6e8 per second (1.67 ns each), never drifts. It is the
// representation of flow.GCRA's exact arithmetic (flow's instant), kept
// per value.
type instant struct{ ns, frac int64 }

// at returns the instant of t nanoseconds.
func at(t int64) instant { return instant{ns: t} }

func (a instant) plus(b instant, lim int64) instant {
	a.ns += b.ns
	if a.frac += b.frac; a.frac >= lim {
		a.frac -= lim
		a.ns++
	}
	return a
}

func (a instant) minus(b instant, lim int64) instant {
	a.ns -= b.ns
	if a.frac -= b.frac; a.frac < 0 {
		a.frac += lim
		a.ns--
	}
	return a
}

func (a instant) after(b instant) bool { return a.ns > b.ns || a.ns == b.ns && a.frac > b.frac }

// ceil returns a rounded up to a whole nanosecond.
func (a instant) ceil() int64 {
	if a.frac > 0 {
		return a.ns + 1
	}
	return a.ns
}

// maxInstant bounds every span a bucket computes; rules keep theirs below
// flow.MaxSpan (2^52 ns), this only keeps a Config the rules would refuse
// from overflowing.
const maxInstant = 1 << 62

// share returns x*window/lim ns exactly, saturating at maxInstant.
func share(x, window, lim int64) instant {
	hi, lo := bits.Mul64(uint64(x), uint64(window))
	if hi >= uint64(lim) {
		return at(maxInstant)
	}
	q, r := bits.Div64(hi, lo, uint64(lim))
	if q >= maxInstant {
		return at(maxInstant)
	}
	return instant{int64(q), int64(r)}
}

// bucket is the arithmetic of the token or leaky buckets of one limit,
// that of flow.GCRA (the generic cell rate algorithm) on a TAT kept with
// its fraction: a request of n costs n*Window/lim and fits while the TAT
// after it is at most the tolerance ahead of now: the capacity for a token
// bucket, MaxWait plus the request's own cost for a leaky bucket, whose
// requests wait until their slot, the TAT before them. Nothing is rounded
// but the durations a Decision reports, up: waits and retry hints are
// never early.
type bucket struct {
	lim, window int64
	burst       int64 // token bucket
	maxWait     int64 // leaky bucket
	leaky       bool
	one         instant // the cost of one request
	// capacity is how far ahead of now the TAT may be for a request of one
	// to fit: Window+Burst*Window/lim, or MaxWait plus one request's cost.
	capacity instant
}

// newBucket returns the bucket of limit lim under cfg; one of limit 0
// only tells that its values are blocked.
func newBucket(cfg *Config, lim int64) *bucket {
	if lim <= 0 {
		return &bucket{}
	}
	b := &bucket{lim: lim, window: int64(cfg.Window), burst: cfg.Burst, maxWait: int64(cfg.MaxWait), leaky: cfg.Algorithm == LeakyBucket}
	b.one = share(1, b.window, lim)
	if b.leaky {
		b.capacity = at(b.maxWait).plus(b.one, lim)
	} else {
		b.capacity = at(b.window).plus(share(b.burst, b.window, lim), lim)
	}
	return b
}

// cost returns the cost of n requests and their tolerance, or fits false
// when they are more than the bucket holds.
func (b *bucket) cost(n int64) (cost, tol instant, fits bool) {
	if n == 1 {
		return b.one, b.capacity, true
	}
	if n > b.lim+b.burst {
		return instant{}, instant{}, false
	}
	cost, tol = share(n, b.window, b.lim), b.capacity
	if b.leaky {
		tol = at(b.maxWait).plus(cost, b.lim)
	}
	return cost, tol, true
}

// decide decides n requests at now against the TAT *t, writing the
// decision to d and, when they are admitted, the end of their slot to *t.
func (b *bucket) decide(d *Decision, t *instant, now, n int64) {
	cost, tol, fits := b.cost(n)
	if !fits {
		d.Decision = flow.Decision{Limit: b.lim, Remaining: b.remaining(now, *t), RetryAfter: time.Duration(b.window)}
		return
	}
	start := *t
	if start.ns < now {
		start = at(now)
	}
	next := start.plus(cost, b.lim)
	if over := next.minus(at(now), b.lim).minus(tol, b.lim); over.after(instant{}) {
		d.Decision = flow.Decision{Limit: b.lim, Remaining: b.remaining(now, *t), RetryAfter: time.Duration(over.ceil())}
		return
	}
	var wait time.Duration
	if b.leaky {
		wait = time.Duration(start.ceil() - now)
	}
	d.Decision = flow.Decision{OK: true, Wait: wait, Limit: b.lim, Remaining: b.remaining(now, next)}
	d.mark = next
	*t = next
}

// remaining returns how many requests of one fit at now when the TAT is t,
// rounded down.
func (b *bucket) remaining(now int64, t instant) int64 {
	if t.ns < now {
		t = at(now)
	}
	left := b.capacity.minus(t.minus(at(now), b.lim), b.lim)
	if left.ns < 0 {
		return 0
	}
	// left*lim/Window, with left's fraction: (left.ns*lim + frac)/Window.
	hi, lo := bits.Mul64(uint64(left.ns), uint64(b.lim))
	lo, c := bits.Add64(lo, uint64(left.frac), 0)
	if hi += c; hi == 0 {
		return int64(lo / uint64(b.window)) // a 64-bit division: faster
	}
	q, _ := bits.Div64(hi, lo, uint64(b.window)) // at most lim+burst: no overflow
	return int64(q)
}
