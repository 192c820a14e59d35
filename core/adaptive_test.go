package core_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/clock"
)

func TestAdaptiveRuleBlocksAtItsLimit(t *testing.T) {
	fc := clock.NewFake(time.Second)
	g, err := core.New(core.WithClock(fc), core.WithRules(core.Rule{
		Name: "api-adaptive", Resource: "GET /api/*", Kind: core.KindAdaptive, MinLimit: 2, MaxLimit: 3,
	}))
	require.NoError(t, err)
	defer g.Close()

	var held []core.Entry
	for range 3 {
		e, err := g.Enter(context.Background(), "GET /api/items")
		require.NoError(t, err)
		held = append(held, e)
	}
	_, err = g.Enter(context.Background(), "GET /api/items")
	var b *core.BlockedError
	require.True(t, errors.As(err, &b), "%v", err)
	assert.Equal(t, core.KindAdaptive, b.Kind)
	assert.Equal(t, "api-adaptive", b.Rule)
	assert.Equal(t, string(core.KindAdaptive), b.Reason())
	assert.Equal(t, int64(3), b.Limit)
	assert.Zero(t, b.Window)
	assert.False(t, b.Never, "the limit moves: the request may pass later")
	assert.Positive(t, b.RetryAfter)

	_, err = g.Enter(context.Background(), "GET /api/items", core.WithCount(3))
	require.True(t, errors.As(err, &b))
	assert.False(t, b.Never, "3 is not above maxLimit")
	_, err = g.Enter(context.Background(), "GET /api/items", core.WithCount(4))
	require.True(t, errors.As(err, &b))
	assert.True(t, b.Never, "above maxLimit")

	snap := g.Snapshot()
	require.Len(t, snap.Rules, 1)
	rs := snap.Rules[0]
	require.NotNil(t, rs.Adaptive)
	assert.Equal(t, int64(3), rs.Adaptive.Limit)
	assert.Equal(t, int64(3), rs.InFlight)
	assert.Equal(t, int64(1+3+4), rs.BlockedTotal)
	assert.Equal(t, int64(1+3+4), snap.Resources[0].Total.BlockedBy[string(core.KindAdaptive)])

	for i := range held {
		held[i].Exit(nil)
	}
	assert.Equal(t, int64(0), g.Snapshot().Rules[0].InFlight)
}

func TestAdaptiveRuleFindsItsLimitFromResponseTimes(t *testing.T) {
	fc := clock.NewFake(time.Second)
	g, err := core.New(core.WithClock(fc), core.WithRules(core.Rule{
		Name: "a", Resource: "*", Kind: core.KindAdaptive, MinLimit: 1, MaxLimit: 100,
	}))
	require.NoError(t, err)
	defer g.Close()
	limit := func() int64 { return g.Snapshot().Rules[0].Adaptive.Limit }
	// round takes as many requests in flight as the rule admits, which
	// end after rt, one interval of the controller or more.
	round := func(rt time.Duration) {
		held := admitAll(g, "GET /x")
		fc.Advance(rt)
		for i := range held {
			held[i].Exit(nil)
		}
	}
	for range 20 {
		round(100 * time.Millisecond)
	}
	assert.Equal(t, int64(100), limit(), "rises to maxLimit while response times stay at their minimum")
	// Slower for good: the limit falls, until a probe takes the new
	// response time for the minimum.
	var fell *core.AdaptiveStats
	for range 15 {
		round(400 * time.Millisecond)
		if st := g.Snapshot().Rules[0].Adaptive; fell == nil && st.Limit < 60 {
			fell = st
		}
	}
	require.NotNil(t, fell, "falls when response times grow")
	assert.Equal(t, 400*time.Millisecond, fell.RecentRT)
	assert.Equal(t, 100*time.Millisecond, fell.MinRT)
}

// TestAdaptiveRuleTakesAbandonedRequestsForNoAnswer: a request that ends
// with its context's error (Entry.Exit) was abandoned by its caller
// before it was served: ended sooner than the service answers, it did
// not set the minimum response time (see adaptive.Controller.Done).
func TestAdaptiveRuleTakesAbandonedRequestsForNoAnswer(t *testing.T) {
	fc := clock.NewFake(time.Second)
	g, err := core.New(core.WithClock(fc), core.WithRules(core.Rule{
		Name: "a", Resource: "*", Kind: core.KindAdaptive, MaxLimit: 20,
	}))
	require.NoError(t, err)
	defer g.Close()
	round := func(abandoned bool) {
		held := admitAll(g, "GET /x")
		if abandoned { // half the callers give up after 5ms, with the context's error
			fc.Advance(5 * time.Millisecond)
			for i := 0; i < len(held); i += 2 {
				held[i].Exit(context.DeadlineExceeded)
			}
			fc.Advance(95 * time.Millisecond)
		} else {
			fc.Advance(100 * time.Millisecond)
		}
		for i := range held {
			held[i].Exit(nil)
		}
	}
	for range 20 {
		round(false)
	}
	st := g.Snapshot().Rules[0].Adaptive
	require.Equal(t, int64(20), st.Limit)
	for range 3 {
		round(true)
	}
	st = g.Snapshot().Rules[0].Adaptive
	assert.Equal(t, 100*time.Millisecond, st.MinRT, "not the 52.5ms average with the abandoned")
	assert.Equal(t, int64(20), st.Limit)
}

func TestAdaptiveRuleKnobsReachItsController(t *testing.T) {
	fc := clock.NewFake(time.Second)
	g, err := core.New(core.WithClock(fc), core.WithRules(core.Rule{
		Name: "a", Resource: "*", Kind: core.KindAdaptive, Window: time.Second, Tolerance: 3, ProbeInterval: time.Hour,
	}))
	require.NoError(t, err)
	defer g.Close()
	st := g.Snapshot().Rules[0]
	assert.Equal(t, time.Second, st.Rule.Window)
	assert.Equal(t, 3.0, st.Rule.Tolerance)
	assert.Equal(t, time.Hour, st.Rule.ProbeInterval)
	// A request of 100ms at a time, all the rule admits: the limit moves
	// once per window of 1s.
	var limits []int64
	for range 35 {
		held := admitAll(g, "GET /x")
		fc.Advance(100 * time.Millisecond)
		for i := range held {
			held[i].Exit(nil)
		}
		limits = append(limits, g.Snapshot().Rules[0].Adaptive.Limit)
	}
	for i := 1; i < len(limits); i++ {
		if limits[i] != limits[i-1] {
			assert.Zero(t, i%10, "changed at round %d: %v", i, limits)
		}
	}
	assert.Greater(t, limits[len(limits)-1], limits[0], "%v", limits)
}

// TestAdaptiveProbesRefuseLittle runs an adaptive rule with no number in
// it before services at half and 0.7 times their capacity, loads they
// carry: the probes of the minimum response time refuse at most 10% of
// the requests of any half second after the first two (in which a load of
// more than the initial limit of 20 in flight is refused in part while
// the limit grows), and of the whole run. Before, a probe came whenever
// the requests used half the limit: 12-13% of some half seconds were
// refused, and up to 30% in the first second.
func TestAdaptiveProbesRefuseLittle(t *testing.T) {
	for _, b := range []backendSim{smallService, {workers: 10, service: 50 * time.Millisecond, deadline: time.Second}, {workers: 100, service: 20 * time.Millisecond, deadline: time.Second}} {
		for _, load := range []float64{0.5, 0.7} {
			g, fc := newGuard(t, core.Rule{Name: "a", Resource: "*", Kind: core.KindAdaptive})
			const win = 500 * time.Millisecond
			var worst float64
			var worstAt time.Duration
			sent, refused := 0, 0
			cur := time.Duration(-1)
			check := func() {
				if cur >= 2*time.Second && sent > 0 && float64(refused)/float64(sent) > worst {
					worst, worstAt = float64(refused)/float64(sent), cur
				}
			}
			var blocked int64
			out := simulate(t, g, fc, b, []streamSim{{load: load}}, 0, 30*time.Second, 1, func(at time.Duration) {
				if w := at / win * win; w != cur {
					check()
					cur, sent, refused = w, 0, 0
				}
				st, _ := g.Stats("GET /x")
				refused += int(st.Total.Block - blocked)
				blocked = st.Total.Block
				sent++
			})
			check()
			all := float64(out[0].refused) / float64(out[0].sent)
			t.Logf("%d workers x %v at %gx: refused %.3f of all, at most %.3f of a half second (at %v)", b.workers, b.service, load, all, worst, worstAt)
			assert.LessOrEqual(t, all, 0.1, "%d workers at %gx: of all", b.workers, load)
			assert.LessOrEqual(t, worst, 0.1, "%d workers at %gx: of the half second at %v", b.workers, load, worstAt)
		}
	}
}

// admitAll enters requests of resource until the Guard rejects one, and
// returns those it admitted, in flight.
func admitAll(g *core.Guard, resource string) []core.Entry {
	var held []core.Entry
	for {
		e, err := g.Enter(context.Background(), resource)
		if err != nil {
			return held
		}
		held = append(held, e)
	}
}
