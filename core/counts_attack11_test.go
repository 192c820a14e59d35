package core_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/clock"
)

// TestHugeCountsNeverWrapStatistics: a request counts at most 2^52
// permits in statistics, so 2048 requests of WithCount(math.MaxInt64)
// would still wrap a counter of permits. 3000 of them, blocked by a flow
// rule, and 3000 admitted on a resource without rules (each exiting) must
// leave every count saturated, never negative nor going down: cumulative
// counters an exporter reads as a reset when they go down.
func TestHugeCountsNeverWrapStatistics(t *testing.T) {
	fc := clock.NewFake(time.Hour)
	g, err := core.New(core.WithClock(fc), core.WithRules(
		core.Rule{Name: "r", Resource: "x", Kind: core.KindFlow, Limit: 10},
		core.Rule{Name: "s", Resource: "x", Kind: core.KindFlow, Limit: 10, Shadow: true}))
	require.NoError(t, err)
	defer g.Close()
	var last core.Snapshot
	for i := range 3000 {
		_, err := g.Enter(context.Background(), "x", core.WithCount(math.MaxInt64))
		require.Error(t, err)
		e, err := g.Enter(context.Background(), "y", core.WithCount(math.MaxInt64))
		require.NoError(t, err)
		e.Exit(nil)
		if i%500 != 499 {
			continue
		}
		fc.Advance(time.Millisecond)
		s := g.Snapshot()
		for j, r := range s.Resources {
			for name, v := range map[string]int64{"InFlight": r.InFlight, "Pass": r.Pass, "Block": r.Block, "Complete": r.Complete,
				"Total.Pass": r.Total.Pass, "Total.Block": r.Total.Block, "Total.Complete": r.Total.Complete, "BlockedBy": r.Total.BlockedBy["rule"]} {
				assert.GreaterOrEqual(t, v, int64(0), "%d requests: %s %s", i+1, r.Resource, name)
			}
			if len(last.Resources) > j {
				assert.GreaterOrEqual(t, r.Total.Pass, last.Resources[j].Total.Pass, "%s: Total.Pass went down", r.Resource)
				assert.GreaterOrEqual(t, r.Total.Block, last.Resources[j].Total.Block, "%s: Total.Block went down", r.Resource)
			}
		}
		for j, r := range s.Rules {
			assert.GreaterOrEqual(t, r.Blocked, int64(0), "%d requests: rule %s", i+1, r.Rule.Name)
			assert.GreaterOrEqual(t, r.Shadowed, int64(0), "%d requests: rule %s", i+1, r.Rule.Name)
			assert.GreaterOrEqual(t, r.Evaluated, int64(0), "%d requests: rule %s", i+1, r.Rule.Name)
			if len(last.Rules) > j {
				assert.GreaterOrEqual(t, r.BlockedTotal, last.Rules[j].BlockedTotal, "rule %s: BlockedTotal went down", r.Rule.Name)
				assert.GreaterOrEqual(t, r.ShadowedTotal, last.Rules[j].ShadowedTotal, "rule %s: ShadowedTotal went down", r.Rule.Name)
			}
		}
		last = s
	}
	for _, r := range last.Resources {
		assert.Zero(t, r.InFlight, r.Resource)
	}
	require.Len(t, last.Rules, 2)
	assert.EqualValues(t, math.MaxInt64, last.Rules[0].BlockedTotal, "saturated")
}

// TestHugeCountsNeverWrapTopBlocked: the values a hotspot rule blocked most
// (WithTopBlockedValues) count permits too: 3000 requests of
// WithCount(math.MaxInt64) of one value leave its count saturated.
func TestHugeCountsNeverWrapTopBlocked(t *testing.T) {
	g, err := core.New(core.WithClock(clock.NewFake(time.Hour)), core.WithTopBlockedValues(10), core.WithRules(
		core.Rule{Name: "r", Resource: "x", Kind: core.KindHotspot, Param: "u", Limit: 10, Window: time.Second}))
	require.NoError(t, err)
	defer g.Close()
	for range 3000 {
		_, err := g.Enter(context.Background(), "x", core.WithCount(math.MaxInt64), core.WithParams(core.ParamMap{"u": {"a"}}))
		require.Error(t, err)
	}
	top := g.Snapshot().Rules[0].TopBlocked
	require.Len(t, top, 1)
	assert.EqualValues(t, math.MaxInt64, top[0].Blocked, "saturated")
}
