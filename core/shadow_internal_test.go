package core

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core/clock"
)

// A shadow rule is logged at the pace of blocks, marked shadow.
func TestShadowRulesAreLoggedOncePerInterval(t *testing.T) {
	fc := clock.NewFake(time.Hour)
	var buf syncBuffer
	g, err := New(WithClock(fc), WithLogger(slog.New(slog.NewTextHandler(&buf, nil))),
		WithRules(Rule{Name: "one", Resource: "r", Kind: KindFlow, Limit: 0, Shadow: true}))
	require.NoError(t, err)
	for range 1000 {
		e, err := g.Enter(t.Context(), "r")
		require.NoError(t, err)
		e.Exit(nil)
	}
	fc.Advance(blockLogInterval)
	e, err := g.Enter(t.Context(), "r")
	require.NoError(t, err)
	e.Exit(nil)
	require.NoError(t, g.Close()) // delivers the queue
	lines := buf.lines()
	require.Len(t, lines, 2, "%q", lines)
	assert.Contains(t, lines[0], `msg="sluice: shadow rule would block requests; they pass" rule=one resource=r shadow=true`)
	assert.Contains(t, lines[1], `msg="sluice: shadow rule would have blocked requests; they passed" rule=one resource=r shadow=true blocked=1000 over=10s`)
}

// TestShadowRulesAllocateNothing: a request the shadow rules that hold
// something until Exit admit allocates nothing (Entry.kept), a shadow
// breaker first.
func TestShadowRulesAllocateNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under the race detector")
	}
	for _, r := range []Rule{
		{Kind: KindConcurrency, Limit: 1 << 20},
		{Kind: KindAdaptive, MinLimit: 1 << 20, MaxLimit: 1 << 20},
		{Kind: KindSystem, Signal: SignalInFlight, Threshold: 1 << 20},
		{Kind: KindBreaker, Strategy: "error-ratio", Threshold: 0.5},
	} {
		r.Name, r.Resource, r.Shadow = "shadow", "r", true
		g, err := New(WithRules(r, Rule{Name: "flow", Resource: "r", Kind: KindFlow, Limit: 1 << 40}))
		require.NoError(t, err)
		t.Cleanup(func() { _ = g.Close() })
		ctx := context.Background()
		allocs := testing.AllocsPerRun(1000, func() {
			e, err := g.Enter(ctx, "r")
			if err != nil {
				t.Fatal(err)
			}
			e.Exit(nil)
		})
		require.Zero(t, allocs, "%s", r.Kind)
	}
}
