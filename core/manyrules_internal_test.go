package core

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core/clock"
)

// manyFlowRules returns n flow rules on resource "r", of limit 10 per
// second but the last, of limit last.
func manyFlowRules(n int, last int64) []Rule {
	rules := make([]Rule, n)
	for i := range rules {
		rules[i] = Rule{Name: fmt.Sprint("r", i), Resource: "r", Kind: KindFlow, Limit: 10, Window: time.Second}
	}
	rules[n-1].Limit = last
	return rules
}

// TestManyRulesAllocateNothing: a request asking more rules than asking
// keeps in place allocates nothing once the Guard's pool has an array.
func TestManyRulesAllocateNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops arrays at random under the race detector")
	}
	for _, n := range []int{5, 20, 32} {
		rules := manyFlowRules(n, 1<<40)
		for i := range rules {
			rules[i].Limit = 1 << 40
		}
		g, err := New(WithRules(rules...))
		require.NoError(t, err)
		t.Cleanup(func() { _ = g.Close() })
		ctx := context.Background()
		allocs := testing.AllocsPerRun(100, func() {
			e, err := g.Enter(ctx, "r")
			if err != nil {
				t.Fatal(err)
			}
			e.Exit(nil)
		})
		require.Zero(t, allocs, "%d rules", n)
	}
}

// TestManyRulesGiveBack: with more rules than asking keeps in place, the
// reservations of the rules that admitted a request the last one rejects
// are given back, and the pooled array serves the next requests alike.
func TestManyRulesGiveBack(t *testing.T) {
	for _, n := range []int{5, 9, 20} {
		clk := clock.NewFake(time.Hour)
		g, err := New(WithClock(clk), WithRules(manyFlowRules(n, 1)...))
		require.NoError(t, err)
		t.Cleanup(func() { _ = g.Close() })
		ctx := context.Background()
		e, err := g.Enter(ctx, "r")
		require.NoError(t, err, "%d rules", n)
		e.Exit(nil)
		for round := range 3 {
			_, err = g.Enter(ctx, "r")
			var be *BlockedError
			require.True(t, errors.As(err, &be), "%d rules, round %d: %v", n, round, err)
			require.Equal(t, fmt.Sprint("r", n-1), be.Rule)
			require.Len(t, be.Policies, n)
			for i, p := range be.Policies[:n-1] {
				// One admitted request of 10; the rejected ones given back.
				require.Equal(t, int64(9), p.Remaining, "%d rules, round %d, rule %d", n, round, i)
			}
		}
	}
}

// TestFloodOfRejectionsAllocatesNothing: requests a single rule rejects
// alike share their error, on the system clock too, whose retry times
// move every nanosecond: they are told to the millisecond.
func TestFloodOfRejectionsAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under the race detector")
	}
	hour := Rule{Name: "hour", Resource: "r", Kind: KindFlow, Limit: 1, Window: time.Hour}
	for _, rules := range [][]Rule{
		{hour},
		{{Resource: "r", Kind: KindFlow, Limit: 1, Window: time.Hour, Algorithm: AlgorithmTokenBucket}},
		{{Resource: "r", Kind: KindFlow, Limit: 0}},
		{{Resource: "r", Kind: KindConcurrency, Limit: 0}},
		// Several rules: the error is made, then found to be the last one
		// (the quota the others tell does not move).
		{
			hour,
			{Resource: "r", Kind: KindHotspot, Param: "p", Limit: 1 << 20},
			{Resource: "r", Kind: KindConcurrency, Limit: 1 << 20},
		},
	} {
		g, err := New(WithRules(rules...))
		require.NoError(t, err)
		t.Cleanup(func() { _ = g.Close() })
		ctx := context.Background()
		params := WithParams(ParamMap{"p": {"v"}})
		_, _ = g.Enter(ctx, "r", params)
		allocs := testing.AllocsPerRun(1000, func() {
			if _, err := g.Enter(ctx, "r", params); err == nil {
				t.Fatal("admitted")
			}
		})
		require.Zero(t, allocs, "%+v", rules)
	}
}

// TestSharedRejectionUnchanged: an error a caller keeps is not changed by
// later rejections, which get their own error when theirs differs, and
// its Policies cannot be appended to in place.
func TestSharedRejectionUnchanged(t *testing.T) {
	f := Rule{Name: "f", Resource: "r", Kind: KindFlow, Limit: 1, Window: time.Second}
	for _, rules := range [][]Rule{{f}, {f, {Name: "c", Resource: "r", Kind: KindConcurrency, Limit: 1 << 20}}} {
		clk := clock.NewFake(time.Hour)
		g, err := New(WithClock(clk), WithRules(rules...))
		require.NoError(t, err)
		t.Cleanup(func() { _ = g.Close() })
		ctx := context.Background()
		e, err := g.Enter(ctx, "r")
		require.NoError(t, err)
		e.Exit(nil)
		var first, again, later *BlockedError
		_, err = g.Enter(ctx, "r")
		require.True(t, errors.As(err, &first))
		kept := *first
		kept.Policies = slices.Clone(first.Policies)
		_, err = g.Enter(ctx, "r")
		require.True(t, errors.As(err, &again))
		require.Equal(t, &kept, again, "the same rejection")
		require.Equal(t, len(first.Policies), cap(first.Policies))
		clk.Advance(300 * time.Millisecond)
		_, err = g.Enter(ctx, "r")
		require.True(t, errors.As(err, &later))
		require.Equal(t, 700*time.Millisecond, later.RetryAfter)
		_, _ = g.Enter(ctx, "r") // the same as later
		require.Equal(t, &kept, first, "a kept error changed: %d rules", len(rules))
		require.Equal(t, time.Second, first.RetryAfter)
	}
}

// TestSingleRuleRejectionKey: a rejection by a single rule returns the last
// error only when the rule's decision would make the same one: each of the
// quota left, the count (a request that can never pass), the retry time
// (to the millisecond) and the rule set tells apart the errors of
// successive rejections.
func TestSingleRuleRejectionKey(t *testing.T) {
	clk := clock.NewFake(time.Hour)
	f := Rule{Name: "f", Resource: "r", Kind: KindFlow, Limit: 3, Window: time.Second, Buckets: 1}
	g, err := New(WithClock(clk), WithRules(f))
	require.NoError(t, err)
	t.Cleanup(func() { _ = g.Close() })
	ctx := context.Background()
	enter := func(n int64) *BlockedError {
		t.Helper()
		_, err := g.Enter(ctx, "r", WithCount(n))
		var b *BlockedError
		if err == nil {
			return nil
		}
		require.True(t, errors.As(err, &b), "%v", err)
		return b
	}
	require.Nil(t, enter(2))
	first := enter(2)
	require.NotNil(t, first)
	assert.Equal(t, int64(1), first.Remaining)
	assert.Equal(t, time.Second, first.RetryAfter)
	assert.Same(t, first, enter(2))
	require.Nil(t, enter(1))
	full := enter(2)
	assert.Equal(t, int64(0), full.Remaining, "the quota left moved")
	never := enter(4)
	assert.True(t, never.Never, "a count above the limit")
	assert.Zero(t, never.RetryAfter)
	again := enter(2)
	assert.Equal(t, full, again)
	clk.Advance(time.Millisecond / 2) // 999.5ms left: told as 1s
	assert.Same(t, again, enter(2))
	clk.Advance(time.Millisecond)
	later := enter(2)
	assert.Equal(t, 999*time.Millisecond, later.RetryAfter)
	// A new rule set: its rule makes its own error.
	require.NoError(t, g.SetRules([]Rule{{Name: "g", Resource: "r", Kind: KindFlow, Limit: 3, Window: time.Second, Buckets: 1}}))
	other := enter(2)
	if other == nil { // the counts did not carry over to the new rule
		other = enter(2)
	}
	require.NotNil(t, other)
	assert.Equal(t, "g", other.Rule)
}
