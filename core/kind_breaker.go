package core

import (
	"fmt"
	"strings"
	"time"

	"github.com/sluicekit/sluice/core/internal/breaker"
)

// breakerSpec describes the breaker kind.
func breakerSpec() kindSpec {
	return kindSpec{
		kind: KindBreaker, doc: "circuit breaker",
		fields: []fieldSpec{
			{key: "window", doc: "The span of the breaker's statistics.", def: breaker.DefaultWindow.String()},
			{key: "buckets", doc: "Buckets of the breaker's statistics.", def: "10", min: 0},
			{key: "strategy", doc: "What the breaker trips on.", required: true, enum: []string{"slow-ratio", "error-ratio", "error-count"}},
			{key: "threshold", doc: "A ratio in (0, 1] of slow or failed requests, or a number of failed requests (error-count).",
				required: true, xmin: 0},
			{key: "maxRT", doc: "Slow-ratio: the response time above which a request is slow."},
			{key: "minRequests", doc: "Requests that must complete in the window before the breaker may trip.", unit: "requests", def: "10", min: 0},
			{key: "openFor", doc: "How long the breaker stays open before letting probes through.", def: breaker.DefaultOpenFor.String()},
			{key: "probes", doc: "Requests let through half-open; all must succeed for it to close.", unit: "requests", def: "1", min: 0},
		},
		check: func(v *validator, r *Rule) { v.addAll(r.breakerConfig().Validate()) },
		defaults: func(r Rule) Rule {
			c := r.breakerConfig().WithDefaults()
			r.Window, r.Buckets, r.MinRequests, r.OpenFor, r.Probes = c.Window, c.Buckets, c.MinRequests, c.OpenFor, c.Probes
			return r
		},
		block: shedBlock("CIRCUIT_OPEN", `%s is failing: circuit breaker "%s" is open`, "circuit open"),
		summary: func(b *strings.Builder, r *Rule) {
			b.WriteString(string(r.Strategy))
			if r.MaxRT > 0 {
				fmt.Fprintf(b, " (> %s)", r.MaxRT)
			}
			fmt.Fprintf(b, " >= %v of >= %d in %s, open %s", r.Threshold, r.MinRequests, r.Window, r.OpenFor)
			if r.Probes > 1 {
				fmt.Fprintf(b, ", %d probes", r.Probes)
			}
		},
		limiter: func(g *Guard, r Rule, prev limiter) (limiter, traits, error) {
			var p *breaker.Breaker
			if k, ok := prev.(*breakerKind); ok {
				p = k.b
			}
			name, resource := r.Name, r.Resource
			b, err := breaker.New(r.breakerConfig(), p, func(t breaker.Transition) {
				g.reporter.send(&breakerReport{BreakerEvent{Rule: name, Resource: resource, From: t.From, To: t.To,
					At: time.Duration(t.At), Requests: t.Requests, Bad: t.Bad, Reason: t.Reason}})
			})
			if err != nil {
				return nil, traits{}, err
			}
			return &breakerKind{b}, traits{holds: true, exits: true, gate: true}, nil
		},
	}
}

// breakerConfig returns the breaker.Config of a breaker rule.
func (r *Rule) breakerConfig() breaker.Config {
	return breaker.Config{Strategy: r.Strategy, Threshold: r.Threshold, MaxRT: r.MaxRT, Window: r.Window, Buckets: r.Buckets,
		MinRequests: r.MinRequests, OpenFor: r.OpenFor, Probes: r.Probes}
}

// breakerKind is a breaker rule. The ticket of the binding's first breaker
// is kept in the Entry (Entry.brk, and a bit of Entry.kept when it is a
// shadow rule), those of the others in Entry.keep.
type breakerKind struct{ b *breaker.Breaker }

func (k *breakerKind) ask(a *asking, rs *ruleState) error {
	t, retry, ok := k.b.Allow(a.now)
	h := a.slot(rs)
	h.t = t
	if ok && a.blocked == nil {
		first := a.b.rules[0] == rs
		if first {
			a.brk = t
		}
		if !first || rs.shadow {
			a.keep(h)
		}
		return nil
	}
	h.d.OK, h.d.RetryAfter = ok, retry
	a.settle(h)
	return nil
}

func (k *breakerKind) undo(h held, _ uint32, _ int64) { k.b.Undo(h.t) }

func (k *breakerKind) exit(h hold, end ending) {
	t := end.brk
	if h.rs != nil {
		t = h.t
	}
	if end.gone {
		k.b.GoneOn(end.cpu, end.now, t, time.Duration(end.rt))
		return
	}
	k.b.DoneOn(end.cpu, end.now, t, time.Duration(end.rt), end.failed)
}

func (*breakerKind) times() bool { return true }

func (k *breakerKind) stats(out *RuleStats, now int64) {
	st := k.b.Stats(now)
	out.Breaker = &st
}
