package core

import (
	"fmt"
	"github.com/sluicekit/sluice/core/internal/concurrency"
	"github.com/sluicekit/sluice/core/internal/flow"
	"strings"
)

// concurrencySpec describes the concurrency kind.
func concurrencySpec() kindSpec {
	return kindSpec{
		kind: KindConcurrency, doc: "requests in flight",
		fields: []fieldSpec{
			{key: "limit", doc: "Requests in flight; 0 blocks every request.", unit: "requests", given: true, min: 0},
		},
		check: func(v *validator, r *Rule) {
			if r.Limit < 0 {
				v.add("limit", "must be >= 0, got %d", r.Limit)
			}
		},
		block:   capacityBlock(grpcResourceExhausted, "CONCURRENCY_LIMITED", true, ""),
		slots:   true,
		summary: func(b *strings.Builder, r *Rule) { fmt.Fprintf(b, "%d in flight", r.Limit) },
		limiter: func(_ *Guard, r Rule, prev limiter) (limiter, traits, error) {
			var p *concurrency.Limiter
			if k, ok := prev.(*concKind); ok {
				p = k.l
			}
			return &concKind{concurrency.New(r.Limit, p)}, traits{exits: true}, nil
		},
	}
}

// concKind is a concurrency rule: its reservation is a count of slots, and
// giving it back needs no decision.
type concKind struct{ l *concurrency.Limiter }

func (k *concKind) ask(a *asking, rs *ruleState) error {
	askSlot(a, rs, k.l.AcquireOn(a.cpu, a.n), k, 0)
	return nil
}

func (k *concKind) alone(l *lone, _ *ruleState) bool {
	if l.d.OK = k.l.AcquireOn(l.cpu, l.n); !l.d.OK {
		l.d.Decision = k.rejection()
	}
	return true
}

// slotKind is a kind that admits by taking a slot (concurrency, adaptive).
type slotKind interface{ rejection() flow.Decision }

// askSlot records the decision of a slot kind for a: admitted when ok,
// else rejected with k's rejection; level is the request's priority level
// (for the kinds that shed by it), for undo.
func askSlot[K slotKind](a *asking, rs *ruleState, ok bool, k K, level uint8) {
	h := a.slot(rs)
	h.level = level
	if ok && a.blocked == nil {
		if rs.holds { // a shadow rule's (see Guard.SetRules)
			a.keep(h)
		}
		return
	}
	if ok {
		h.d.OK = true
	} else {
		h.d.Decision = k.rejection()
	}
	a.settle(h)
}

// rejection is the decision of the rule when it rejects a request.
func (k *concKind) rejection() flow.Decision {
	lim, inFlight := k.l.Limit(), k.l.InFlight()
	return flow.Decision{Limit: lim, Remaining: max(lim-inFlight, 0)}
}

func (k *concKind) undo(_ held, cpu uint32, n int64) { k.l.ReleaseOn(cpu, n) }

func (k *concKind) exit(_ hold, end ending) { k.l.ReleaseOn(end.cpu, end.n) }

func (*concKind) times() bool { return false }

func (k *concKind) stats(out *RuleStats, _ int64) {
	out.InFlight = k.l.InFlight()
	out.Limit, out.Use, out.HasUse = k.l.Limit(), out.InFlight, true
}
