package flow

import (
	"math"
	"sync/atomic"
)

// warmup is the warm-up of a rule, the model of Sentinel's WarmUpController
// and Guava's SmoothWarmingUp: a store of tokens fills at Limit per Window
// and loses a token per admitted request, and how full it is sets the limit
// in force. At or below the warning level the rule is warm (Limit); above
// it the time a request costs grows linearly with the tokens, to ColdFactor
// times Limit's at the most the store holds (the limit there is
// Limit/ColdFactor). Above the warning level the store fills only while
// traffic runs below Limit/ColdFactor, so it stays cold until traffic has
// used it up: a rule that idles below Limit/ColdFactor stays cold, and one
// that runs between that and Limit settles at the warning level, warm.
//
// With P = Warmup/Window and cold factor c, the warning level is P*Limit/(c-1)
// tokens and the store holds P*2*Limit/(c+1) more: the time traffic at the
// limit in force takes to use those up, the area under the cost of a
// request between the two levels, is Warmup.
//
// The store is updated at most once per tick by whichever caller wins a
// compare-and-swap, so reading the limit costs two atomic loads. A tick is
// at least one Window: the window algorithms admit in bursts (a saturated
// fixed window admits its whole limit at the window's start and nothing
// after), so the admitted rate is only meaningful over a window. The limit in
// force over a tick is the mean rate at which traffic at that limit empties
// the store over the tick, so a full-rate spike from cold is warm after
// Warmup, not a tick later.
type warmup struct {
	limit int64
	cold  int64   // Limit/ColdFactor, at least 1 unless Limit is 0
	tick  int64   // ns
	fill  float64 // tokens per ns
	cf    float64 // ColdFactor
	warn  float64 // warning level, tokens
	max   float64 // tokens the store holds
	// slope is how much the cost of a request grows per token above warn,
	// in ns per token per token; 0 when ColdFactor is 1 (no warm-up).
	slope float64
	state *warmState
}

// warmState is the part of a warm-up that a rule reload carries over. The
// level is kept as a share of the most the store holds, so that it means
// the same coldness under a new limit or warm-up.
type warmState struct {
	last     atomic.Int64  // time of the last update
	level    atomic.Uint64 // float64 bits: stored tokens / max, in [0, 1]
	eff      atomic.Int64  // limit in force
	admitted atomic.Int64  // requests admitted since last
}

func newWarmup(cfg Config, prev Limiter) *warmup {
	cf := float64(cfg.ColdFactor)
	periods := float64(cfg.Warmup) / float64(cfg.Window)
	w := &warmup{
		limit: cfg.Limit,
		cold:  min(max(cfg.Limit/int64(cfg.ColdFactor), 1), cfg.Limit),
		tick:  max(int64(cfg.Warmup)/100, int64(cfg.Window)),
		fill:  float64(cfg.Limit) / float64(cfg.Window),
		cf:    cf,
	}
	if cfg.ColdFactor > 1 && cfg.Limit > 0 {
		w.warn = periods * float64(cfg.Limit) / (cf - 1)
		w.max = w.warn + periods*2*float64(cfg.Limit)/(cf+1)
		w.slope = (cf - 1) / w.fill / (w.max - w.warn)
	}
	if p, ok := prev.(interface{ common() *base }); ok && p.common().warm != nil {
		w.state = p.common().warm.state
	} else {
		w.state = &warmState{}
		w.state.level.Store(math.Float64bits(1)) // cold
	}
	w.state.eff.Store(w.limitFor(w.tokens()))
	return w
}

// tokens returns the tokens stored.
func (w *warmup) tokens() float64 {
	return math.Float64frombits(w.state.level.Load()) * w.max
}

// limitFor returns the limit in force over the next tick with tokens stored:
// the tokens traffic admitted at that limit uses up over a tick, per Window.
func (w *warmup) limitFor(tokens float64) int64 {
	above := tokens - w.warn
	if w.slope == 0 || above <= 0 {
		return w.limit
	}
	// The cost of a request is i = 1/fill + slope*above, and traffic at
	// 1/i uses above at d(above)/dt = -1/i, so i*i falls by 2*slope per ns.
	t := float64(w.tick)
	i0 := 1/w.fill + w.slope*above
	i2 := i0*i0 - 2*w.slope*t
	var used float64
	if warm := 1 / w.fill; i2 > warm*warm {
		used = above - (math.Sqrt(i2)-warm)/w.slope
	} else { // warm within the tick, at Limit from then on
		used = above + (t-(i0*i0-warm*warm)/(2*w.slope))*w.fill
	}
	// Rounded to the nearest, so that traffic at the limit in force uses
	// the tokens the model says, on average, and a spike warms in Warmup.
	return min(max(int64(math.Round(used/(t*w.fill)*float64(w.limit))), w.cold), w.limit)
}

// at returns the limit in force at now, first updating the store when a
// tick has passed since the last update.
func (w *warmup) at(now int64) int64 {
	s := w.state
	last := s.last.Load()
	if elapsed := now - last; elapsed >= w.tick && s.last.CompareAndSwap(last, now) {
		a := float64(max(s.admitted.Swap(0), 0)) // below 0 after Undos of a previous tick's requests
		tokens := w.tokens()
		// The store fills below the warning level, and above it while the
		// admitted rate is below the cold limit's.
		if tokens < w.warn || a < float64(elapsed)*w.fill/w.cf {
			tokens += float64(elapsed) * w.fill
		}
		tokens = min(max(tokens-a, 0), w.max)
		if w.max > 0 {
			s.level.Store(math.Float64bits(tokens / w.max))
		}
		s.eff.Store(w.limitFor(tokens))
	}
	return s.eff.Load()
}
