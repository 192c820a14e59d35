package core_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/breaker"
	"github.com/sluicekit/sluice/core/clock"
)

// A shadow rule decides each request as its enforced twin does, at the
// same times: what the twin blocks, it counts as shadowed, and the
// request passes.
func TestShadowRuleCountsWhatItsTwinBlocks(t *testing.T) {
	rule := func(name, res string, alg core.Algorithm, shadow bool) core.Rule {
		return core.Rule{Name: name, Resource: res, Kind: core.KindFlow, Limit: 3, Burst: 1, Algorithm: alg, Shadow: shadow}
	}
	for _, alg := range []core.Algorithm{core.AlgorithmLeapArray, core.AlgorithmTokenBucket, core.AlgorithmSlidingLog} {
		t.Run(string(alg), func(t *testing.T) {
			r1, r2 := rule("shadow", "GET /a", alg, true), rule("enforced", "GET /b", alg, false)
			if alg != core.AlgorithmTokenBucket {
				r1.Burst, r2.Burst = 0, 0
			}
			g, fc := newGuard(t, r1, r2)
			ctx := context.Background()
			var blocked int64
			// Requests at these times (ms after the start), to each.
			for _, at := range []time.Duration{0, 0, 0, 0, 0, 100, 200, 400, 900, 1000, 1000, 1100, 1100, 1100, 1500, 1500, 1500, 1500, 2600} {
				fc.Set(10*time.Second + at*ms)
				e, err := g.Enter(ctx, "GET /a")
				require.NoError(t, err, "a shadow rule never blocks (at %v)", at)
				e.Exit(nil)
				e, err = g.Enter(ctx, "GET /b")
				if err != nil {
					blockedBy(t, err)
					blocked++
				} else {
					e.Exit(nil)
				}
			}
			require.Positive(t, blocked)
			sh, en := ruleStats(t, g, "shadow"), ruleStats(t, g, "enforced")
			assert.Equal(t, blocked, sh.ShadowedTotal)
			assert.Equal(t, en.Blocked, sh.Shadowed, "over the last second")
			assert.Zero(t, sh.BlockedTotal)
			assert.Zero(t, en.ShadowedTotal)
			assert.Equal(t, en.Evaluated, sh.Evaluated)
			assert.True(t, sh.Rule.Shadow)
		})
	}
}

// Switching a rule between shadow and enforced keeps its state and counts.
func TestShadowSwitchByReloadKeepsCounts(t *testing.T) {
	r := core.Rule{Name: "items", Resource: "GET /items", Kind: core.KindFlow, Limit: 3, Shadow: true}
	g, fc := newGuard(t, r)
	ctx := context.Background()
	for range 5 {
		e, err := g.Enter(ctx, "GET /items")
		require.NoError(t, err)
		e.Exit(nil)
	}
	r.Shadow = false
	require.NoError(t, g.SetRules([]core.Rule{r}))
	fc.Advance(100 * ms)
	_, err := g.Enter(ctx, "GET /items")
	b := blockedBy(t, err)
	assert.Equal(t, 900*ms, b.RetryAfter, "the 3 permits the shadow rule gave are still taken")
	st := ruleStats(t, g, "items")
	assert.Equal(t, int64(2), st.ShadowedTotal)
	assert.Equal(t, int64(1), st.BlockedTotal)
	assert.Equal(t, int64(6), st.Evaluated)
	assert.False(t, st.Rule.Shadow)

	r.Shadow = true // and back
	require.NoError(t, g.SetRules([]core.Rule{r}))
	e, err := g.Enter(ctx, "GET /items")
	require.NoError(t, err)
	e.Exit(nil)
	st = ruleStats(t, g, "items")
	assert.Equal(t, int64(3), st.ShadowedTotal)
	assert.Equal(t, int64(1), st.BlockedTotal)
}

// A shadow concurrency rule holds a slot for the requests it admits only:
// one it would reject passes without a slot, and its Exit frees none.
func TestShadowConcurrencyHoldsNoSlotForWhatItWouldReject(t *testing.T) {
	for _, kind := range []core.Kind{core.KindConcurrency, core.KindAdaptive, core.KindSystem} {
		t.Run(string(kind), func(t *testing.T) {
			r := core.Rule{Name: "inflight", Resource: "GET /x", Kind: kind, Limit: 1, Shadow: true}
			switch kind {
			case core.KindAdaptive:
				r.Limit, r.MinLimit, r.MaxLimit = 0, 1, 1
			case core.KindSystem:
				r.Limit, r.Signal, r.Threshold = 0, core.SignalInFlight, 1
			}
			g, _ := newGuard(t, r, core.Rule{Name: "other", Resource: "*", Kind: core.KindFlow, Limit: 1000})
			ctx := context.Background()
			e1, err := g.Enter(ctx, "GET /x")
			require.NoError(t, err)
			e2, err := g.Enter(ctx, "GET /x")
			require.NoError(t, err, "shadow")
			assert.Equal(t, int64(1), ruleStats(t, g, "inflight").InFlight)
			e2.Exit(nil)
			assert.Equal(t, int64(1), ruleStats(t, g, "inflight").InFlight, "e1 still holds the slot")
			e3, err := g.Enter(ctx, "GET /x")
			require.NoError(t, err)
			e3.Exit(nil)
			e1.Exit(nil)
			assert.Equal(t, int64(0), ruleStats(t, g, "inflight").InFlight)
			assert.Equal(t, int64(2), ruleStats(t, g, "inflight").ShadowedTotal)

			// Alone on its resource, first of its binding, it does the same.
			r.Resource = "GET /y"
			require.NoError(t, g.SetRules([]core.Rule{r}))
			e1, err = g.Enter(ctx, "GET /y")
			require.NoError(t, err)
			e2, err = g.Enter(ctx, "GET /y")
			require.NoError(t, err)
			e2.Exit(nil)
			assert.Equal(t, int64(1), ruleStats(t, g, "inflight").InFlight)
			e1.Exit(nil)
			assert.Equal(t, int64(0), ruleStats(t, g, "inflight").InFlight)
		})
	}
}

// Exit ends a request for exactly the shadow rules that admitted it, with
// more of them on a resource than an Entry notes in place (the others are
// kept as enforced breakers' tickets are), a shadow breaker first.
func TestShadowRulesManyHoldOnlyWhatTheyAdmitted(t *testing.T) {
	rules := []core.Rule{{Name: "brk", Resource: "GET /x", Kind: core.KindBreaker, Strategy: breaker.ErrorCount,
		Threshold: 2, MinRequests: 1, OpenFor: time.Second, Shadow: true}}
	for i := range 12 {
		// Even ones admit one request at a time, odd ones two.
		rules = append(rules, core.Rule{Name: fmt.Sprintf("c%d", i), Resource: "GET /x", Kind: core.KindConcurrency,
			Limit: int64(1 + i%2), Shadow: true})
	}
	g, fc := newGuard(t, rules...)
	ctx := context.Background()
	inFlight := func(want ...int64) {
		t.Helper()
		for i := range 12 {
			assert.Equal(t, want[i%2], ruleStats(t, g, fmt.Sprintf("c%d", i)).InFlight, "c%d", i)
		}
	}
	e1, err := g.Enter(ctx, "GET /x")
	require.NoError(t, err)
	e2, err := g.Enter(ctx, "GET /x") // admitted by the odd ones only
	require.NoError(t, err)
	e3, err := g.Enter(ctx, "GET /x") // by none
	require.NoError(t, err)
	inFlight(1, 2)
	e3.Exit(nil)
	inFlight(1, 2)
	e2.Exit(nil)
	inFlight(1, 1)
	e1.Exit(nil)
	inFlight(0, 0)

	// The breaker records the outcomes of the requests it admitted only:
	// two failures open it; the requests then pass, and the probe's
	// success after OpenFor closes it.
	for range 2 {
		e, err := g.Enter(ctx, "GET /x")
		require.NoError(t, err)
		e.Exit(errors.New("down"))
	}
	require.Equal(t, breaker.Open, ruleStats(t, g, "brk").Breaker.State)
	for range 3 {
		e, err := g.Enter(ctx, "GET /x")
		require.NoError(t, err)
		e.Exit(errors.New("down"))
	}
	assert.Equal(t, int64(3), ruleStats(t, g, "brk").ShadowedTotal)
	fc.Advance(time.Second)
	e, err := g.Enter(ctx, "GET /x")
	require.NoError(t, err)
	e.Exit(nil)
	assert.Equal(t, breaker.Closed, ruleStats(t, g, "brk").Breaker.State)
	inFlight(0, 0)
}

// A shadow breaker records the outcomes of the requests it admits and
// opens as an enforced one would; while open, requests pass, counted.
func TestShadowBreakerNeverRejects(t *testing.T) {
	r := core.Rule{Name: "brk", Resource: "GET /db", Kind: core.KindBreaker, Strategy: breaker.ErrorCount,
		Threshold: 2, MinRequests: 1, OpenFor: time.Second, Shadow: true}
	for _, rules := range [][]core.Rule{{r}, {r, {Name: "flow", Resource: "GET /db", Kind: core.KindFlow, Limit: 1000}}} {
		g, fc := newGuard(t, rules...)
		ctx := context.Background()
		fail := errors.New("down")
		for range 2 {
			e, err := g.Enter(ctx, "GET /db")
			require.NoError(t, err)
			e.Exit(fail)
		}
		st := ruleStats(t, g, "brk")
		require.Equal(t, breaker.Open, st.Breaker.State)
		for range 4 {
			e, err := g.Enter(ctx, "GET /db")
			require.NoError(t, err, "open in shadow")
			e.Exit(nil)
		}
		st = ruleStats(t, g, "brk")
		assert.Equal(t, int64(4), st.ShadowedTotal)
		assert.Equal(t, breaker.Open, st.Breaker.State)
		fc.Advance(time.Second)
		e, err := g.Enter(ctx, "GET /db") // the probe
		require.NoError(t, err)
		e.Exit(nil)
		assert.Equal(t, breaker.Closed, ruleStats(t, g, "brk").Breaker.State, "the probe's outcome was recorded")
	}
}

// A shadow leaky bucket takes the request's turn without making it wait.
func TestShadowLeakyBucketDoesNotWait(t *testing.T) {
	g, fc := newGuard(t, core.Rule{Name: "pace", Resource: "GET /p", Kind: core.KindFlow, Limit: 10,
		Algorithm: core.AlgorithmLeakyBucket, MaxWait: time.Second, Shadow: true})
	done := make(chan error, 1)
	go func() {
		for range 12 {
			e, err := g.Enter(context.Background(), "GET /p")
			if err != nil {
				done <- err
				return
			}
			e.Exit(nil)
		}
		done <- nil
	}()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(30 * time.Second):
		t.Fatal("a shadow leaky bucket made a request wait")
	}
	expired, cancelExpired := context.WithCancel(context.Background())
	cancelExpired()
	assert.Error(t, fc.WaitForSleepers(expired, 1), "no request waited on the clock")
	// 11 turns within MaxWait, 100ms apart (the first at once); the 12th
	// would have been rejected.
	assert.Equal(t, int64(1), ruleStats(t, g, "pace").ShadowedTotal)
}

// A shadow rule's quota policies are left out unless WithShadowQuotas.
func TestShadowQuotas(t *testing.T) {
	rules := []core.Rule{
		{Name: "shadow", Resource: "GET /q", Kind: core.KindFlow, Limit: 1, Shadow: true},
		{Name: "enforced", Resource: "GET /q", Kind: core.KindFlow, Limit: 2},
	}
	for _, report := range []bool{false, true} {
		opts := []core.Option{core.WithClock(clock.NewFake(time.Hour)), core.WithRules(rules...)}
		if report {
			opts = append(opts, core.WithShadowQuotas())
		}
		g, err := core.New(opts...)
		require.NoError(t, err)
		ctx := context.Background()
		var got [][]string
		for range 3 {
			var qs []core.Quota
			e, err := g.Enter(ctx, "GET /q", core.WithQuotas(&qs))
			if err != nil {
				qs = blockedBy(t, err).Policies
			}
			var names []string
			for _, q := range qs {
				names = append(names, q.Rule)
			}
			got = append(got, names)
			if q, ok := leastQuota(qs); ok && !report {
				assert.Equal(t, "enforced", q.Rule)
			}
			e.Exit(nil)
		}
		if report {
			// The third is blocked: its policies are those of the rules
			// that admitted it, and of the rule that blocked it.
			assert.Equal(t, [][]string{{"shadow", "enforced"}, {"shadow", "enforced"}, {"enforced"}}, got)
		} else {
			assert.Equal(t, [][]string{{"enforced"}, {"enforced"}, {"enforced"}}, got)
		}
		require.NoError(t, g.Close())
	}
}

// A request another rule blocks lists a shadow rule that admitted it in
// its policies only with WithShadowQuotas.
func TestShadowQuotasOfBlockedRequests(t *testing.T) {
	rules := []core.Rule{
		{Name: "shadow", Resource: "GET /q", Kind: core.KindFlow, Limit: 10, Shadow: true},
		{Name: "enforced", Resource: "GET /q", Kind: core.KindFlow, Limit: 1},
	}
	for _, report := range []bool{false, true} {
		opts := []core.Option{core.WithClock(clock.NewFake(time.Hour)), core.WithRules(rules...)}
		if report {
			opts = append(opts, core.WithShadowQuotas())
		}
		g, err := core.New(opts...)
		require.NoError(t, err)
		e, err := g.Enter(context.Background(), "GET /q")
		require.NoError(t, err)
		e.Exit(nil)
		_, err = g.Enter(context.Background(), "GET /q")
		var names []string
		for _, q := range blockedBy(t, err).Policies {
			names = append(names, q.Rule)
		}
		if report {
			assert.Equal(t, []string{"shadow", "enforced"}, names)
		} else {
			assert.Equal(t, []string{"enforced"}, names)
		}
		require.NoError(t, g.Close())
	}
}

// WithShadow makes every rule a shadow rule.
func TestWithShadow(t *testing.T) {
	g, err := core.New(core.WithClock(clock.NewFake(time.Hour)), core.WithShadow(),
		core.WithRules(core.Rule{Name: "none", Resource: "*", Kind: core.KindFlow, Limit: 0},
			core.Rule{Name: "user", Resource: "*", Kind: core.KindHotspot, Limit: 1, Param: "q", OnMissing: core.MissingReject}))
	require.NoError(t, err)
	defer g.Close()
	for range 3 {
		e, err := g.Enter(context.Background(), "GET /")
		require.NoError(t, err)
		e.Exit(nil)
	}
	for _, r := range g.Rules() {
		assert.True(t, r.Shadow, r.Name)
	}
	assert.Equal(t, int64(3), ruleStats(t, g, "none").ShadowedTotal)
	assert.Equal(t, int64(3), ruleStats(t, g, "user").ShadowedTotal)
	st, _ := g.Stats("GET /")
	assert.Equal(t, int64(3), st.Total.Pass)
	assert.Zero(t, st.Total.Block)
}

// A request without the param of a shadow hotspot rule that rejects such
// requests has no quota policy of it, even WithShadowQuotas.
func TestShadowMissingParamHasNoQuota(t *testing.T) {
	g, err := core.New(core.WithClock(clock.NewFake(time.Hour)), core.WithShadowQuotas(),
		core.WithRules(core.Rule{Name: "user", Resource: "*", Kind: core.KindHotspot, Limit: 1, Param: "q", OnMissing: core.MissingReject, Shadow: true}))
	require.NoError(t, err)
	defer g.Close()
	var qs []core.Quota
	e, err := g.Enter(context.Background(), "GET /", core.WithQuotas(&qs))
	require.NoError(t, err)
	e.Exit(nil)
	assert.Empty(t, qs)
}

// Under parallel load a shadow concurrency rule's count of requests in
// flight stays exact: 0 once all exited, however many it would have
// rejected (an Exit releasing a slot its request never took would drive it
// negative). The workers' first requests are all in flight at once: it
// would have rejected at least the 5 over its limit. (Left to the
// scheduler, no more than 3 overlapped in 7 of 2000 runs beside busy
// processes, and the test read no rejection.)
func TestShadowConcurrencyUnderLoad(t *testing.T) {
	g, err := core.New(core.WithLogger(slog.New(slog.DiscardHandler)), core.WithRules(
		core.Rule{Name: "inflight", Resource: "GET /x", Kind: core.KindConcurrency, Limit: 3, Shadow: true},
		core.Rule{Name: "brk", Resource: "GET /x", Kind: core.KindBreaker, Strategy: breaker.ErrorRatio, Threshold: 0.5, MinRequests: 5, Shadow: true},
		core.Rule{Name: "rate", Resource: "GET /x", Kind: core.KindFlow, Limit: 1 << 40}))
	require.NoError(t, err)
	defer g.Close()
	const workers = 8
	var wg, entered sync.WaitGroup
	entered.Add(workers)
	for w := range workers {
		wg.Go(func() {
			for i := range 2000 {
				e, err := g.Enter(context.Background(), "GET /x")
				if i == 0 {
					entered.Done()
				}
				if err != nil {
					t.Error(err)
					return
				}
				if i == 0 {
					entered.Wait() // all first requests in flight
				}
				runtime.Gosched() // others enter meanwhile
				var fail error
				if (w+i)%3 == 0 {
					fail = errors.New("x")
				}
				e.Exit(fail)
			}
		})
	}
	wg.Wait()
	st := ruleStats(t, g, "inflight")
	assert.Zero(t, st.InFlight)
	assert.GreaterOrEqual(t, st.ShadowedTotal, int64(workers-3))
}
