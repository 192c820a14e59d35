package core

import (
	"fmt"
	"strings"
	"time"

	"github.com/sluicekit/sluice/core/clock"
	"github.com/sluicekit/sluice/core/internal/adaptive"
	"github.com/sluicekit/sluice/core/internal/flow"
	"github.com/sluicekit/sluice/core/internal/priority"
)

// adaptiveSpec describes the adaptive kind.
func adaptiveSpec() kindSpec {
	return kindSpec{
		kind: KindAdaptive, doc: "requests in flight, the limit found from response times",
		fields: []fieldSpec{
			{key: "window", doc: "How often the rule reconsiders its limit, from the response times of the requests that ended; at most 1m.",
				def: adaptive.DefaultInterval.String()},
			{key: "minLimit", doc: "The lowest limit on requests in flight (default maxLimit when lower).", unit: "requests", def: "2", min: 1},
			{key: "maxLimit", doc: "The highest limit on requests in flight (default minLimit when higher).", unit: "requests", def: "1000", min: 1},
			{key: "tolerance", doc: "How many times its lowest response time the recent one may be before the limit falls.",
				def: "1.5", xmin: 1, max: adaptive.MaxTolerance},
			{key: "probeInterval", doc: "The longest time between two probes for the lowest response time, which lower the limit for a few windows; at least the window, at most 24h.",
				def: adaptive.DefaultProbeInterval.String()},
			priorityField(),
		},
		unsetHints: map[string]string{"limit": "its limit is found from response times; bound it with minLimit and maxLimit"},
		check: func(v *validator, r *Rule) {
			v.addAll(r.adaptiveConfig().Validate())
			v.checkPriority(r)
		},
		defaults: func(r Rule) Rule {
			c := r.adaptiveConfig().WithDefaults()
			r.MinLimit, r.MaxLimit, r.Window, r.Tolerance, r.ProbeInterval = c.MinLimit, c.MaxLimit, c.Interval, c.Tolerance, c.ProbeInterval
			return r
		},
		block: capacityBlock(grpcUnavailable, "OVERLOADED", true, ""),
		summary: func(b *strings.Builder, r *Rule) {
			fmt.Fprintf(b, "adaptive in flight, %d..%d", r.MinLimit, r.MaxLimit)
		},
		limiter: func(g *Guard, r Rule, prev limiter) (limiter, traits, error) {
			var p *adaptive.Controller
			var pl *priority.Tracker
			if k, ok := prev.(*adaptiveKind); ok {
				p, pl = k.c, k.levels
			}
			return &adaptiveKind{adaptive.New(r.adaptiveConfig(), p), priority.New(pl), g.clock}, traits{exits: true, adapts: true}, nil
		},
	}
}

// adaptiveKind is an adaptive concurrency rule: a concurrency limit that
// its controller finds from the response times of the requests it admits.
// It sheds by priority level (see Priority) before its controller is
// asked.
type adaptiveKind struct {
	c      *adaptive.Controller
	levels *priority.Tracker
	clock  clock.Clock // of the Guard, for undo
}

func (k *adaptiveKind) ask(a *asking, rs *ruleState) error {
	level := a.priority(&rs.rule)
	// A level passes the limit by a little while lower ones come, and
	// leaves a little of it free while higher ones do (see Priority).
	ok := k.c.Acquire(a.n, k.levels.Allowance(a.now, level, k.c.Limit()))
	if ok {
		k.levels.Admitted(a.now, level, a.n, false)
	}
	askSlot(a, rs, ok, k, uint8(level))
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

func (k *adaptiveKind) undo(h held, _ uint32, n int64) {
	k.c.Release(n)
	k.levels.Undo(int64(k.clock.Now()), int(h.level), n, false)
}

func (k *adaptiveKind) exit(_ hold, end ending) {
	k.c.Done(end.now, end.rt, end.n, end.gone)
	k.levels.Done(int(end.level), end.n)
}

func (*adaptiveKind) times() bool { return true }

func (k *adaptiveKind) stats(out *RuleStats, _ int64) {
	out.InFlight = k.c.InFlight()
	recent, minimum := k.c.RT()
	out.Adaptive = &AdaptiveStats{Limit: k.c.Limit(), RecentRT: recent, MinRT: minimum}
	out.Limit, out.Use, out.HasUse = out.Adaptive.Limit, out.InFlight, true
}
