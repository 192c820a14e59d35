package core

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core/clock"
	"github.com/sluicekit/sluice/core/internal/flow"
	"github.com/sluicekit/sluice/core/internal/hotspot"
	"github.com/sluicekit/sluice/core/store"
)

// TestReasonNames: the reasons core/prometheus and core/otel label their
// counts with are the names Totals.BlockedBy counts by: every kind's and
// the two that are none, each once.
func TestReasonNames(t *testing.T) {
	want := []string{ReasonFallback, ReasonCancelled}
	for _, k := range []Kind{KindFlow, KindConcurrency, KindHotspot, KindBreaker, KindAdaptive, KindSystem} {
		want = append(want, string(k))
		assert.Equal(t, string(k), (&BlockedError{Kind: k}).Reason())
	}
	assert.ElementsMatch(t, want, blockReasons[:])
	for _, k := range builtinKinds() {
		assert.Equal(t, string(k.kind), blockReasons[k.block.reason], "the reason of a %s rule's blocks", k.kind)
	}
	assert.Equal(t, ReasonFallback, (&BlockedError{Kind: KindFlow, Fallback: true}).Reason())
	assert.Equal(t, ReasonCancelled, blockReasons[reasonCancelled])
}

// TestEveryKindIsAsked: the limiter of every kind, in memory and in a
// store, is in asking.ask's switch (a kind missing from it panics), admits
// a request, gives its reservation back, ends it and reports its stats.
func TestEveryKindIsAsked(t *testing.T) {
	fc := clock.NewFake(time.Second)
	mem, err := store.NewMemory(fc, 0)
	require.NoError(t, err)
	g, err := New(WithClock(fc), WithStore("mem", mem), WithRules(
		Rule{Resource: "r", Kind: KindFlow, Limit: 10},
		Rule{Resource: "r", Kind: KindConcurrency, Limit: 10},
		Rule{Resource: "r", Kind: KindHotspot, Param: "query:p", Limit: 10},
		Rule{Resource: "r", Kind: KindHotspot, Param: "query:p", Algorithm: "concurrency", Limit: 10},
		Rule{Resource: "r", Kind: KindBreaker, Strategy: "error-ratio", Threshold: 0.5},
		Rule{Resource: "r", Kind: KindFlow, Store: "mem", Limit: 10},
		Rule{Resource: "r", Kind: KindHotspot, Param: "query:p", Store: "mem", Limit: 10},
	))
	require.NoError(t, err)
	defer g.Close()
	now := int64(fc.Now())
	for _, rs := range g.rules.Load().rules {
		for _, end := range []bool{false, true} {
			a := asking{g: g, b: &binding{rules: []*ruleState{rs}}, ctx: context.Background(), resource: "r",
				params: ParamMap{"query:p": {"v"}}, now: now, n: 1}
			require.NotPanics(t, func() { require.NoError(t, a.ask(rs)) }, "%T", rs.lim)
			require.Nil(t, a.blocked, rs.rule.Name)
			require.Len(t, a.admitted(), 1, rs.rule.Name)
			if h := a.admitted()[0]; end {
				var e Entry
				e.keep(&h)
				rs.lim.exit(e.few[0], ending{now: now, n: 1})
			} else {
				undo(a.admitted(), 0, 1)
			}
		}
		assert.Equal(t, rs.rule.Name, rs.snapshot(now, nil, time.Hour).Rule.Name)
	}
}

// TestAlgorithmConstants checks that the Algorithm constants, written out
// for their documentation, are the limiters' names.
func TestAlgorithmConstants(t *testing.T) {
	assert.Equal(t, []Algorithm{AlgorithmLeapArray, AlgorithmFixedWindow, AlgorithmSlidingLog, AlgorithmSlidingCounter, AlgorithmTokenBucket, AlgorithmLeakyBucket},
		[]Algorithm{Algorithm(flow.LeapArray), Algorithm(flow.FixedWindow), Algorithm(flow.SlidingLog), Algorithm(flow.SlidingCounter), Algorithm(flow.TokenBucket), Algorithm(flow.LeakyBucket)})
	assert.Equal(t, []Algorithm{AlgorithmTokenBucket, AlgorithmLeakyBucket, AlgorithmConcurrency},
		[]Algorithm{Algorithm(hotspot.TokenBucket), Algorithm(hotspot.LeakyBucket), Algorithm(hotspot.Concurrency)})
}
