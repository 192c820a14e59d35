package flow

import (
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

// retryAfter returns how long from now until n more fit under lim in the
// sliding window of the aligned window c, with curr requests in it.
func (s *slidingCounter) retryAfter(c *period, now, curr, n, lim int64) time.Duration {
	return time.Duration(ratemath.SlidingWait(c.prev, curr, now-c.start, n, lim, int64(s.cfg.Window)))
}

func (s *slidingCounter) Undo(d Decision, n int64) {
	if d.OK {
		undoPeriod(d, n)
		s.th.undone(n)
	}
}
