package flow

import (
	"math"
	"time"

	"github.com/sluicekit/sluice/core/ratemath"
)

// slidingCounter estimates the count of the sliding window as the previous
// aligned window's count weighted by its overlap with the sliding window plus
// the current window's count: prev*(window-elapsed)/window + curr.
type slidingCounter struct {
	cfg Config
	th  threshold
	ps  *periods
}

func newSlidingCounter(cfg Config, th threshold, prev Limiter) *slidingCounter {
	if p, ok := prev.(*slidingCounter); ok && p.cfg.Window == cfg.Window {
		return &slidingCounter{cfg: cfg, th: th, ps: p.ps}
	}
	return &slidingCounter{cfg: cfg, th: th, ps: &periods{}}
}

func (s *slidingCounter) Config() Config        { return s.cfg }
func (s *slidingCounter) warmState() *warmState { return warmStateOf(s.th) }

// estimate returns the weighted count of the sliding window ending at now
// whose aligned window is c, with curr requests in it.
func (s *slidingCounter) estimate(c *period, now, curr int64) float64 {
	return ratemath.SlidingEstimate(c.prev, curr, now-c.start, int64(s.cfg.Window))
}

func (s *slidingCounter) AcquireOn(_ uint32, now, n int64) Decision { return s.Acquire(now, n) }

func (s *slidingCounter) Acquire(now int64, n int64) Decision {
	lim := s.th.at(now)
	if n > lim {
		// Never fits; not added, so that no count can overflow.
		c := s.ps.at(now, int64(s.cfg.Window))
		est := s.estimate(c, now, c.count.Load())
		return Decision{Limit: lim, Remaining: max(int64(float64(lim)-est), 0), RetryAfter: s.cfg.Window}
	}
	c, v := s.ps.reserve(now, int64(s.cfg.Window), n)
	est := s.estimate(c, now, v)
	if est <= float64(lim) {
		s.th.admitted(n)
		d := Decision{OK: true, Limit: lim, Remaining: int64(float64(lim) - est), ref: c}
		if d.Remaining == 0 {
			d.Next = s.retryAfter(c, now, v, 1, lim)
		}
		return d
	}
	c.count.Add(-n)
	return Decision{
		Limit:      lim,
		Remaining:  max(int64(float64(lim)-(est-float64(n))), 0),
		RetryAfter: s.retryAfter(c, now, v-n, n, lim),
	}
}

// retryAfter solves prev*(w-e)/w + curr + n <= lim for the earliest elapsed
// time e, in this window or, when curr alone is too many, in the next one
// (where curr becomes prev).
func (s *slidingCounter) retryAfter(c *period, now, curr, n, lim int64) time.Duration {
	w := float64(s.cfg.Window)
	if n > lim {
		return s.cfg.Window
	}
	var at float64
	if curr+n <= lim {
		at = float64(c.start) + ratemath.SlidingEarliest(c.prev, curr, n, lim, w)
	} else {
		at = float64(c.start) + w + ratemath.SlidingEarliest(curr, 0, n, lim, w)
	}
	return time.Duration(max(math.Ceil(at-float64(now)), 0))
}

func (s *slidingCounter) Undo(d Decision, n int64) {
	if d.OK {
		undoPeriod(d, n)
		s.th.undone(n)
	}
}
