package core

import (
	"time"

	"github.com/sluicekit/sluice/core/internal/adaptive"
	"github.com/sluicekit/sluice/core/internal/flow"
)

// adaptiveKind is an adaptive concurrency rule: a concurrency limit that
// its controller finds from the response times of the requests it admits.
type adaptiveKind struct{ c *adaptive.Controller }

func newAdaptiveKind(r Rule, prev limiter) (limiter, traits, error) {
	var p *adaptive.Controller
	if k, ok := prev.(*adaptiveKind); ok {
		p = k.c
	}
	c := adaptive.New(r.adaptiveConfig(), p)
	return &adaptiveKind{c}, traits{exits: true, adapts: true}, nil
}

func (k *adaptiveKind) ask(a *asking, rs *ruleState) error {
	askSlot(a, rs, k.c.Acquire(a.n), k)
	return nil
}

// adaptiveConfig returns the configuration of r's controller.
func (r *Rule) adaptiveConfig() adaptive.Config {
	return adaptive.Config{
		MinLimit: r.MinLimit, MaxLimit: r.MaxLimit, Interval: r.Window,
		Tolerance: r.Tolerance, ProbeInterval: r.ProbeInterval,
	}
}

// rejection is the decision of the rule when it rejects a request: retry
// after about the time a request takes, when a slot may free.
func (k *adaptiveKind) rejection() flow.Decision {
	lim := k.c.Limit()
	recent, _ := k.c.RT()
	return flow.Decision{Limit: lim, Remaining: max(lim-k.c.InFlight(), 0), RetryAfter: max(recent, time.Millisecond)}
}

func (k *adaptiveKind) undo(_ held, _ uint32, n int64) { k.c.Release(n) }

func (k *adaptiveKind) exit(_ *held, end ending) { k.c.Done(end.now, end.rt, end.n) }

func (k *adaptiveKind) stats(out *RuleStats, _ int64) {
	out.InFlight = k.c.InFlight()
	recent, minimum := k.c.RT()
	out.Adaptive = &AdaptiveStats{Limit: k.c.Limit(), RecentRT: recent, MinRT: minimum}
}

// AdaptiveStats are the state of an adaptive rule (RuleStats.Adaptive).
type AdaptiveStats struct {
	// Limit is the limit on requests in flight in force.
	Limit int64
	// RecentRT is the average response time of the requests that ended in
	// the controller's last interval, MinRT the baseline it compares it
	// with; both 0 until the first interval ends.
	RecentRT, MinRT time.Duration
}
