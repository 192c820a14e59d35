package core_test

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/clock"
)

// TestHugeCountsOverflowNoConcurrencyLimit: a request's count (WithCount,
// which the adapters' WithCost functions give, from a request's own
// numbers, say) near 2^63 is refused by concurrency rules, per value too,
// whatever is in flight, and the limit holds afterwards. Before, the
// reservation overflowed when slots were in flight: with 10 of 10 held, a
// request of math.MaxInt64 permits was admitted, and every request after
// it while it ran (the count had wrapped below zero).
func TestHugeCountsOverflowNoConcurrencyLimit(t *testing.T) {
	for name, r := range map[string]core.Rule{
		"concurrency":           {Kind: core.KindConcurrency, Limit: 10},
		"hotspot, concurrency":  {Kind: core.KindHotspot, Param: "u", Algorithm: core.AlgorithmConcurrency, Limit: 10},
		"concurrency, max":      {Kind: core.KindConcurrency, Limit: math.MaxInt64},
		"hotspot, override max": {Kind: core.KindHotspot, Param: "u", Algorithm: core.AlgorithmConcurrency, Limit: 10, Overrides: map[string]int64{"a": math.MaxInt64}},
	} {
		t.Run(name, func(t *testing.T) {
			r.Name, r.Resource = "r", "x"
			g, err := core.New(core.WithClock(clock.NewFake(time.Hour)), core.WithRules(r))
			require.NoError(t, err)
			defer g.Close()
			user := core.WithParams(core.ParamMap{"u": {"a"}})
			enter := func(n int64) (core.Entry, error) { return g.Enter(context.Background(), "x", core.WithCount(n), user) }
			limit := r.Limit
			if r.Overrides != nil {
				limit = r.Overrides["a"]
			}
			held, err := enter(limit - 1)
			require.NoError(t, err)
			for _, n := range []int64{math.MaxInt64, math.MaxInt64 - 5, math.MaxInt64/2 + 1, 2} {
				e, err := enter(n)
				if !assert.Error(t, err, "%d permits with %d of %d held", n, limit-1, limit) {
					e.Exit(nil)
					continue
				}
				assert.True(t, errors.Is(err, core.ErrBlocked), "%v", err)
			}
			last, err := enter(1)
			require.NoError(t, err, "the last slot")
			_, err = enter(1)
			require.Error(t, err, "all slots held")
			last.Exit(nil)
			held.Exit(nil)
			e, err := enter(limit)
			require.NoError(t, err, "every slot came back")
			e.Exit(nil)
		})
	}
}

// TestHugeCountsOverflowNoInFlightShedding: the same attack on the
// in-flight limits the lead's kinds keep: an adaptive rule (MaxLimit 3)
// and a system rule on requests in flight (threshold 3), 2 requests in
// flight. On a748097 a request of math.MaxInt64 permits is admitted by
// both, and so is every request after it while it runs (the in-flight
// count wraps): 4 of 4 requests of one permit passed a limit with 1 slot
// left.
func TestHugeCountsOverflowNoInFlightShedding(t *testing.T) {
	for _, r := range []core.Rule{
		{Name: "r", Resource: "x", Kind: core.KindAdaptive, MinLimit: 3, MaxLimit: 3},
		{Name: "r", Resource: "x", Kind: core.KindSystem, Signal: "inflight", Threshold: 3},
	} {
		t.Run(string(r.Kind), func(t *testing.T) {
			g, err := core.New(core.WithClock(clock.NewFake(time.Hour)), core.WithRules(r))
			require.NoError(t, err)
			defer g.Close()
			for range 2 {
				e, err := g.Enter(context.Background(), "x")
				require.NoError(t, err)
				defer e.Exit(nil)
			}
			if e, err := g.Enter(context.Background(), "x", core.WithCount(math.MaxInt64)); !assert.Error(t, err, "a request of 2^63-1 permits") {
				defer e.Exit(nil)
			}
			admitted := 0
			for range 4 {
				if e, err := g.Enter(context.Background(), "x"); err == nil {
					admitted++
					defer e.Exit(nil)
				}
			}
			assert.LessOrEqual(t, admitted, 1, "requests admitted with 2 of 3 in flight")
		})
	}
}

// TestHugeCountsKeepStatisticsSane: a resource's statistics count
// permits, so two requests of WithCount(math.MaxInt64) on a resource
// without a rule wrap them: on a748097 Snapshot shows InFlight -2 and
// Total.Pass -2 while they run, and three such requests blocked by a flow
// rule of limit 10 show Block 9223372036854775805 (cumulative counters an
// exporter turns into a reset, or a rate of 9.2e18 per second).
func TestHugeCountsKeepStatisticsSane(t *testing.T) {
	g, err := core.New(core.WithClock(clock.NewFake(time.Hour)), core.WithRules(core.Rule{Name: "r", Resource: "x", Kind: core.KindFlow, Limit: 10}))
	require.NoError(t, err)
	defer g.Close()
	for range 3 {
		_, err := g.Enter(context.Background(), "x", core.WithCount(math.MaxInt64))
		require.Error(t, err)
	}
	for range 2 {
		if e, err := g.Enter(context.Background(), "y", core.WithCount(math.MaxInt64)); err == nil {
			defer e.Exit(nil)
		}
	}
	for _, r := range g.Snapshot().Resources {
		assert.GreaterOrEqual(t, r.InFlight, int64(0), r.Resource)
		assert.GreaterOrEqual(t, r.Total.Pass, int64(0), r.Resource)
		assert.LessOrEqual(t, r.Total.Block, int64(3)*(1<<52), r.Resource)
	}
}
