package flow

import "sync/atomic"

// warmup is the warm-up ramp of a rule: the limit in force grows linearly from
// Limit/ColdFactor to Limit as the rule accumulates heat, and heat accumulates
// while traffic runs at least at half the cold limit and drains at the same
// pace while it runs below. Heat is measured in nanoseconds, from 0 (cold) to
// Config.Warmup (warm), and updated at most once per tick by whichever caller
// wins a compare-and-swap, so reading the limit costs two atomic loads.
//
// A tick is at least one Window: the window algorithms admit in bursts (a
// saturated fixed window admits its whole limit at the window's start and
// nothing after), so the admitted rate is only meaningful over a window. A
// shorter tick would see the quiet part of a saturated window as idle and
// cool a rule that runs at its limit.
type warmup struct {
	limit, cold    int64
	warmup, window int64
	tick           int64
	state          *warmState
}

// warmState is the part of a warm-up that a rule reload carries over.
type warmState struct {
	last     atomic.Int64 // time of the last heat update
	heat     atomic.Int64 // ns, in [0, warmup]
	eff      atomic.Int64 // limit in force
	admitted atomic.Int64 // requests admitted since last
}

func newWarmup(cfg Config, prev Limiter) *warmup {
	cold := max(cfg.Limit/int64(cfg.ColdFactor), 1)
	if cfg.Limit == 0 {
		cold = 0
	}
	w := &warmup{
		limit:  cfg.Limit,
		cold:   cold,
		warmup: int64(cfg.Warmup),
		window: int64(cfg.Window),
		tick:   max(int64(cfg.Warmup)/100, int64(cfg.Window)),
	}
	if p, ok := prev.(interface{ warmState() *warmState }); ok && p.warmState() != nil {
		w.state = p.warmState()
		w.state.heat.Store(min(w.state.heat.Load(), w.warmup))
	} else {
		w.state = &warmState{}
	}
	w.state.eff.Store(w.limitFor(w.state.heat.Load()))
	return w
}

func (w *warmup) limitFor(heat int64) int64 {
	return w.cold + mulDiv(w.limit-w.cold, heat, w.warmup)
}

// at returns the limit in force at now, first updating the heat when a tick
// has passed since the last update.
func (w *warmup) at(now int64) int64 {
	s := w.state
	last := s.last.Load()
	if elapsed := now - last; elapsed >= w.tick && s.last.CompareAndSwap(last, now) {
		a := s.admitted.Swap(0)
		heat := s.heat.Load()
		// Heating when the admitted rate reached half the cold rate:
		// a/elapsed >= cold/2/window.
		if float64(a)*2*float64(w.window) >= float64(w.cold)*float64(elapsed) && a > 0 {
			heat = min(heat+elapsed, w.warmup)
		} else {
			heat = max(heat-elapsed, 0)
		}
		s.heat.Store(heat)
		s.eff.Store(w.limitFor(heat))
	}
	return s.eff.Load()
}

// warmStateOf returns the warm-up state of th for a reload to carry over, or
// nil when th has no warm-up.
func warmStateOf(th threshold) *warmState {
	if th.warm == nil {
		return nil
	}
	return th.warm.state
}
