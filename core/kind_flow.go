package core

import (
	"fmt"
	"math"
	"strings"

	"github.com/sluicekit/sluice/core/internal/flow"
)

// flowSpec describes the flow kind.
func flowSpec() kindSpec {
	return kindSpec{
		kind: KindFlow, doc: "request rate",
		fields: append([]fieldSpec{
			{key: "limit", doc: "Requests per window; 0 blocks every request.", unit: "requests", given: true, min: 0},
			{key: "window", doc: "The period limit applies to.", def: flow.DefaultWindow.String()},
			{key: "algorithm", doc: "How requests are counted; sliding-counter is the default with a store.", def: string(flow.DefaultAlgorithm),
				enum: []string{"leap-array", "fixed-window", "sliding-log", "sliding-counter", "token-bucket", "leaky-bucket"}},
			{key: "buckets", doc: "Leap-array buckets.", def: "10", min: 0},
			{key: "burst", doc: "Token-bucket tokens above limit.", unit: "requests", min: 0},
			{key: "maxWait", doc: "Leaky-bucket: the longest a request may queue for its turn."},
			{key: "warmup", doc: "Ramps the limit from limit/coldFactor to limit over this time."},
			{key: "coldFactor", doc: "With warmup: the limit starts at limit/coldFactor.", def: "3", min: 0},
		}, storeFields()...),
		check: func(v *validator, r *Rule) {
			v.addAll(ruleFlowConfig(r).Validate())
			v.checkStore(r, defaultStoreAlgorithm, AlgorithmSlidingCounter, AlgorithmTokenBucket, AlgorithmLeakyBucket)
		},
		defaults: func(r Rule) Rule {
			if r.Store != "" && r.Algorithm == "" {
				r.Algorithm = defaultStoreAlgorithm
			}
			c := ruleFlowConfig(&r).WithDefaults()
			r.Algorithm, r.Window, r.Buckets, r.ColdFactor = Algorithm(c.Algorithm), c.Window, c.Buckets, c.ColdFactor
			if r.Store != "" {
				r.Buckets = 0
			}
			return r
		},
		block: quotaBlock(),
		summary: func(b *strings.Builder, r *Rule) {
			fmt.Fprintf(b, "%d per %s, %s", r.Limit, r.Window, r.Algorithm)
			if r.Warmup > 0 {
				fmt.Fprintf(b, ", warmup %s", r.Warmup)
			}
		},
		limiter: func(g *Guard, r Rule, prev limiter) (limiter, traits, error) {
			if r.Store != "" {
				return newStoreKind(g, r, prev, false)
			}
			var p flow.Limiter
			if k, ok := prev.(*flowKind); ok {
				p = k.l
			}
			l, err := flow.Reload(r.flowConfig(), p, int64(g.clock.Now()))
			if err != nil {
				return nil, traits{}, err
			}
			return &flowKind{l}, flowTraits(l.Config().Algorithm), nil
		},
	}
}

// flowKind is a flow rule kept in memory.
type flowKind struct{ l flow.Limiter }

func (k *flowKind) ask(a *asking, rs *ruleState) error {
	h := a.slot(rs)
	flow.AcquireTo(k.l, &h.d.Decision, a.cpu, a.now, a.n, true)
	a.decided(h)
	return nil
}

func (k *flowKind) alone(l *lone, _ *ruleState) bool {
	flow.AcquireTo(k.l, &l.d.Decision, l.cpu, l.now, l.n, l.quota)
	return true
}

func (k *flowKind) undo(h held, _ uint32, n int64) { k.l.Undo(h.d.Decision, n) }

func (*flowKind) exit(hold, ending) {}

func (*flowKind) times() bool { return false }

// stats asks the limiter about more permits than it ever admits at once:
// every algorithm decides that without taking any, the decision telling
// the limit in force (a warm-up ramp's included) and the quota left.
func (k *flowKind) stats(out *RuleStats, now int64) {
	r := &out.Rule
	if r.Limit >= math.MaxInt64-r.Burst {
		return
	}
	d := k.l.Acquire(now, r.Limit+r.Burst+1)
	out.Limit = d.Limit + r.Burst
	out.Use, out.HasUse = max(out.Limit-d.Remaining-flow.Leased(k.l, now), 0), true
}
