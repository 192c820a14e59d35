package flow

import (
	"sync/atomic"
	"time"
)

// period is the count of one aligned window; fixedWindow and slidingCounter
// replace it with a new one when the window ends.
type period struct {
	start int64
	prev  int64 // count of the window before, when it was the one just ended
	count atomic.Int64
}

// periods is the current period of a rule, carried over on reload.
type periods struct {
	cur atomic.Pointer[period]
}

// at returns the period holding now, starting a new one when the current one
// has ended. A reading earlier than the current period counts in it.
func (p *periods) at(now, length int64) *period {
	for {
		c := p.cur.Load()
		if c != nil && now < c.start+length {
			return c
		}
		start := floorStart(now, length)
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
// count. If the period ended while the add was in flight, the add is moved to
// the new period, so a count is never lost to a window that already rolled.
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

func undoPeriod(d Decision, n int64) {
	if c, ok := d.ref.(*period); ok {
		c.count.Add(-n)
	}
}

// fixedWindow counts admissions per aligned window.
type fixedWindow struct {
	cfg Config
	th  threshold
	ps  *periods
}

func newFixedWindow(cfg Config, th threshold, prev Limiter) *fixedWindow {
	if p, ok := prev.(*fixedWindow); ok && p.cfg.Window == cfg.Window {
		return &fixedWindow{cfg: cfg, th: th, ps: p.ps}
	}
	return &fixedWindow{cfg: cfg, th: th, ps: &periods{}}
}

func (f *fixedWindow) Config() Config        { return f.cfg }
func (f *fixedWindow) warmState() *warmState { return warmStateOf(f.th) }

func (f *fixedWindow) AcquireOn(_ uint32, now, n int64) Decision { return f.Acquire(now, n) }

func (f *fixedWindow) Acquire(now int64, n int64) Decision {
	lim := f.th.at(now)
	w := int64(f.cfg.Window)
	if n > lim {
		// Never fits; not added, so that no count can overflow.
		used := f.ps.at(now, w).count.Load()
		return Decision{Limit: lim, Remaining: max(lim-used, 0), RetryAfter: f.cfg.Window}
	}
	c, v := f.ps.reserve(now, w, n)
	// A request of one after the window is full waits for its end.
	retry := time.Duration(max(c.start+w-now, 0))
	if v <= lim {
		f.th.admitted(n)
		d := Decision{OK: true, Limit: lim, Remaining: lim - v, ref: c}
		if d.Remaining == 0 {
			d.Next = retry
		}
		return d
	}
	c.count.Add(-n)
	return Decision{Limit: lim, Remaining: max(lim-(v-n), 0), RetryAfter: retry}
}

func (f *fixedWindow) Undo(d Decision, n int64) {
	if d.OK {
		undoPeriod(d, n)
		f.th.undone(n)
	}
}
