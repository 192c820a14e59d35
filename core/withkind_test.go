package core_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/clock"
)

// TestWithKindRefusesMalformedKinds checks that New names what is wrong
// with a kind definition.
func TestWithKindRefusesMalformedKinds(t *testing.T) {
	ok := core.KindDef{Kind: "budget", Fields: []string{"limit"}, Block: core.BlockClass{Status: 503, GRPCCode: 14},
		Enforce: func(r core.Rule) core.Rule { return core.Rule{Kind: core.KindFlow, Limit: r.Limit} }}
	for _, tc := range []struct {
		name string
		edit func(*core.KindDef)
		want string
	}{
		{"built-in name", func(d *core.KindDef) { d.Kind = core.KindFlow }, `kind "flow": the name is taken`},
		{"malformed name", func(d *core.KindDef) { d.Kind = "my kind" }, `kind "my kind": the name must be a letter, then letters, digits, '_', '.' and '-'`},
		{"no Enforce", func(d *core.KindDef) { d.Enforce = nil }, `kind "budget": its Enforce is nil`},
		{"unknown field", func(d *core.KindDef) { d.Fields = []string{"limit", "quota"} }, `kind "budget": its Fields: "quota" is not a rule field a kind may take`},
		{"common field", func(d *core.KindDef) { d.Fields = []string{"resource"} }, `kind "budget": its Fields: "resource" is not a rule field a kind may take`},
		{"status", func(d *core.KindDef) { d.Block.Status = 200 }, `kind "budget": its Block.Status must be in [400, 599], got 200`},
		{"gRPC code", func(d *core.KindDef) { d.Block.GRPCCode = 0 }, `kind "budget": its Block.GRPCCode must be in [1, 16], got 0`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := ok
			tc.edit(&d)
			_, err := core.New(core.WithKind(d))
			assert.EqualError(t, err, "sluice: WithKind: "+tc.want)
		})
	}
	_, err := core.New(core.WithKind(ok), core.WithKind(ok))
	assert.EqualError(t, err, `sluice: WithKind: kind "budget": the name is taken`, "twice")
}

// TestWithKindEnforcingRuleProblems checks that the problems of the rule
// that enforces a rule of a Guard's kind are that rule's, and that a kind
// enforced by no built-in kind is refused.
func TestWithKindEnforcingRuleProblems(t *testing.T) {
	d := core.KindDef{Kind: "budget", Fields: []string{"limit"}, Block: core.BlockClass{Status: 429, GRPCCode: 8},
		Enforce: func(r core.Rule) core.Rule { return core.Rule{Kind: core.KindFlow, Limit: r.Limit} }}
	g, err := core.New(core.WithKind(d))
	assert.NoError(t, err)
	err = g.SetRules([]core.Rule{{Resource: "*", Kind: "budget", Limit: -1}})
	assert.EqualError(t, err, "rules[0]: limit must be >= 0, got -1 (enforced as a flow rule)")
	err = g.SetRules([]core.Rule{{Resource: "*", Kind: "budget", Limit: 1, Window: 1}})
	assert.EqualError(t, err, "rules[0]: window does not apply to kind budget (only to kinds flow, hotspot, breaker and adaptive)")

	d.Kind, d.Enforce = "nowhere", func(core.Rule) core.Rule { return core.Rule{Kind: "budget"} }
	g, err = core.New(core.WithKind(d))
	assert.NoError(t, err)
	err = g.SetRules([]core.Rule{{Resource: "*", Kind: "nowhere", Limit: 1}})
	assert.EqualError(t, err, `rules[0]: kind is enforced by a rule of kind "budget", not a built-in kind`)
}

// TestSummaryOfAKindOfItsOwn checks that a rule of a kind of a Guard's own
// is described by the fields it sets, and a built-in kind's by its
// descriptor.
func TestSummaryOfAKindOfItsOwn(t *testing.T) {
	assert.Equal(t, "limit 2, window 1m0s", core.Rule{Kind: "budget", Resource: "*", Limit: 2, Window: time.Minute}.Summary())
	assert.Equal(t, "5 per 1s, token-bucket, burst 2", core.Rule{Kind: core.KindFlow, Limit: 5, Window: time.Second, Algorithm: core.AlgorithmTokenBucket, Burst: 2}.Summary())
}

// TestBlockOfAKindOfItsOwnSaysItsEnforcersState checks that the error of a
// block by a rule of a Guard's kind that a breaker enforces names the
// breaker's state and retry time, as a breaker rule's does, not a limit.
func TestBlockOfAKindOfItsOwnSaysItsEnforcersState(t *testing.T) {
	d := core.KindDef{Kind: "outage", Fields: []string{"threshold"}, Block: core.BlockClass{Status: 503, GRPCCode: 14},
		Enforce: func(r core.Rule) core.Rule {
			return core.Rule{Kind: core.KindBreaker, Strategy: "error-ratio", Threshold: r.Threshold,
				MinRequests: 2, Window: 10 * time.Second, OpenFor: 5 * time.Second}
		}}
	fc := clock.NewFake(time.Second)
	g, err := core.New(core.WithClock(fc), core.WithKind(d), core.WithLogger(slog.New(slog.DiscardHandler)),
		core.WithRules(core.Rule{Name: "down", Resource: "POST /pay", Kind: "outage", Threshold: 0.5}))
	require.NoError(t, err)
	defer g.Close()
	for range 2 {
		require.NoError(t, call(g, fc, "POST /pay", 0, errFailed))
	}
	_, err = g.Enter(context.Background(), "POST /pay")
	assert.EqualError(t, err, `sluice: POST /pay blocked by outage rule "down": circuit open, retry after 5s`)
	var be *core.BlockedError
	require.ErrorAs(t, err, &be)
	assert.Equal(t, "breaker", be.Reason(), "counted under the enforcing rule's kind")
	st, _ := g.Stats("POST /pay")
	assert.Equal(t, map[string]int64{"breaker": 1}, st.Total.BlockedBy)
}

// TestOnlyConcurrencyHoldsSlots checks the descriptors' Slots, which the
// exporters read for a rule's requests in flight: concurrency rules hold a
// fixed count of slots; adaptive and system rules count requests in flight
// too, against a limit that moves or a threshold, and are not reported so.
func TestOnlyConcurrencyHoldsSlots(t *testing.T) {
	var slots []core.Kind
	for _, k := range core.Kinds() {
		if k.Slots {
			slots = append(slots, k.Kind)
		}
	}
	assert.Equal(t, []core.Kind{core.KindConcurrency}, slots)
}
