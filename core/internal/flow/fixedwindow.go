package flow

import (
	"sync/atomic"
	"time"

	"github.com/sluicekit/sluice/core/internal/window"
	"github.com/sluicekit/sluice/core/ratemath"
)

// period is the count of one aligned window, replaced by a new one when the
// window ends.
type period struct {
	start int64
	prev  int64 // count of the window before, when it was the one just ended
	count atomic.Int64
}

// periods is the current period of a rule, carried over on reload.
type periods struct{ cur atomic.Pointer[period] }

// at returns the period holding now, starting a new one when the current one
// has ended. A reading earlier than the current period counts in it.
func (p *periods) at(now, length int64) *period {
	for {
		c := p.cur.Load()
		if c != nil && now < c.start+length {
			return c
		}
		start := window.Floor(now, length)
		np := &period{start: start}
		if c != nil && c.start+length == start {
			np.prev = c.count.Load()
		}
		if p.cur.CompareAndSwap(c, np) {
			return np
		}
	}
}

// reserve adds n to the period holding now and returns it with its new
// count, moving the add to the next period if this one ended meanwhile.
func (p *periods) reserve(now, length, n int64) (*period, int64) {
	c := p.at(now, length)
	v := c.count.Add(n)
	if p.cur.Load() != c {
		c.count.Add(-n)
		c = p.at(now, length)
		v = c.count.Add(n)
	}
	return c, v
}

// counter is the Limiter of FixedWindow, which counts admissions per
// aligned window, and of SlidingCounter, which estimates the count of the
// sliding window as the previous aligned window's count weighted by its
// overlap with it plus the current window's: prev*(window-elapsed)/window
// + curr.
type counter struct {
	base
	ps      *periods
	sliding bool
}

func newCounter(b base, prev Limiter) *counter {
	c, cfg := &counter{base: b, ps: &periods{}, sliding: b.cfg.Algorithm == SlidingCounter}, b.cfg
	p, ok := prev.(*counter)
	if ok && p.cfg.Window == cfg.Window {
		c.ps = p.ps // fixed or sliding: the same periods
	}
	if !ok || c.ps == p.ps {
		return c
	}
	// Another window: the counts of p's current period and the one before,
	// each at the last nanosecond of its old one (see New); a count that
	// lands in the period just before the new current one is its prev.
	old, oldLen, newLen := p.ps.cur.Load(), int64(p.cfg.Window), int64(cfg.Window)
	if old == nil {
		return c
	}
	np := &period{start: window.Floor(old.start+oldLen-1, newLen)}
	np.count.Store(max(old.count.Load(), 0))
	switch before := window.Floor(old.start-1, newLen); {
	case old.prev <= 0:
	case before == np.start:
		np.count.Add(old.prev)
	case before == np.start-newLen:
		np.prev = old.prev
	}
	c.ps.cur.Store(np)
	return c
}

// estimate returns the count of the window ending at now whose aligned
// window is c, with curr requests in it.
func (f *counter) estimate(c *period, now, curr int64) float64 {
	if !f.sliding {
		return float64(curr)
	}
	return ratemath.SlidingEstimate(c.prev, curr, now-c.start, int64(f.cfg.Window))
}

// retryAfter returns how long from now until n more fit under lim in the
// window of the aligned window c, with curr requests in it.
func (f *counter) retryAfter(c *period, now, curr, n, lim int64) time.Duration {
	w := int64(f.cfg.Window)
	if !f.sliding {
		return time.Duration(max(c.start+w-now, 0)) // the window's end
	}
	return time.Duration(ratemath.SlidingWait(c.prev, curr, now-c.start, n, lim, w))
}

func (f *counter) Acquire(now int64, n int64) Decision {
	lim, w := f.limitAt(now), int64(f.cfg.Window)
	if n > lim {
		// Never fits; not added, so that no count can overflow.
		c := f.ps.at(now, w)
		est := f.estimate(c, now, c.count.Load())
		return Decision{Limit: lim, Remaining: max(int64(float64(lim)-est), 0), RetryAfter: f.cfg.Window}
	}
	c, v := f.ps.reserve(now, w, n)
	est := f.estimate(c, now, v)
	if est <= float64(lim) {
		f.admitted(n)
		d := Decision{OK: true, Limit: lim, Remaining: int64(float64(lim) - est), ref: c}
		if d.Remaining == 0 {
			d.Next = f.retryAfter(c, now, v, 1, lim)
		}
		return d
	}
	c.count.Add(-n)
	return Decision{
		Limit:      lim,
		Remaining:  max(int64(float64(lim)-(est-float64(n))), 0),
		RetryAfter: f.retryAfter(c, now, v-n, n, lim),
	}
}

func (f *counter) Undo(d Decision, n int64) {
	if c, ok := d.ref.(*period); ok && d.OK {
		c.count.Add(-n)
		f.undone(n)
	}
}
