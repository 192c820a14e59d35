package core_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core"
)

// RuleStats tells each rule's limit and how much of it is taken; reading
// it takes nothing.
func TestRuleLimitAndUse(t *testing.T) {
	g, fc := newGuard(t,
		core.Rule{Name: "window", Resource: "GET /w", Kind: core.KindFlow, Limit: 5},
		core.Rule{Name: "log", Resource: "GET /w", Kind: core.KindFlow, Limit: 6, Algorithm: core.AlgorithmSlidingLog},
		core.Rule{Name: "bucket", Resource: "GET /b", Kind: core.KindFlow, Limit: 2, Burst: 3, Algorithm: core.AlgorithmTokenBucket},
		core.Rule{Name: "inflight", Resource: "GET /c", Kind: core.KindConcurrency, Limit: 4},
		core.Rule{Name: "adaptive", Resource: "GET /c", Kind: core.KindAdaptive, MinLimit: 3, MaxLimit: 3},
		core.Rule{Name: "per-user", Resource: "GET /c", Kind: core.KindHotspot, Limit: 1, Param: "u"},
	)
	ctx := context.Background()
	enter := func(res string, n int) {
		for range n {
			e, err := g.Enter(ctx, res)
			require.NoError(t, err, res)
			e.Exit(nil)
		}
	}
	use := func(name string) (int64, int64, bool) {
		st := ruleStats(t, g, name)
		return st.Limit, st.Use, st.HasUse
	}
	enter("GET /w", 3)
	enter("GET /b", 4)
	e1, err := g.Enter(ctx, "GET /c")
	require.NoError(t, err)
	e2, err := g.Enter(ctx, "GET /c")
	require.NoError(t, err)
	for range 3 { // reading again changes nothing
		assert.Equal(t, []any{int64(5), int64(3), true}, tuple(use("window")))
		assert.Equal(t, []any{int64(6), int64(3), true}, tuple(use("log")))
		assert.Equal(t, []any{int64(5), int64(4), true}, tuple(use("bucket")), "limit with burst, tokens taken")
		assert.Equal(t, []any{int64(4), int64(2), true}, tuple(use("inflight")))
		assert.Equal(t, []any{int64(3), int64(2), true}, tuple(use("adaptive")))
		assert.Equal(t, []any{int64(0), int64(0), false}, tuple(use("per-user")))
	}
	e1.Exit(nil)
	e2.Exit(nil)
	enter("GET /w", 2) // the window's limit is 5: two more pass, not a third
	_, err = g.Enter(ctx, "GET /w")
	blockedBy(t, err)
	enter("GET /b", 1)
	assert.Equal(t, []any{int64(5), int64(5), true}, tuple(use("window")))
	assert.Equal(t, []any{int64(5), int64(5), true}, tuple(use("bucket")))
	assert.Equal(t, []any{int64(4), int64(0), true}, tuple(use("inflight")))

	fc.Advance(time.Second) // the window slides past; the bucket refills 2
	assert.Equal(t, []any{int64(5), int64(0), true}, tuple(use("window")))
	assert.Equal(t, []any{int64(5), int64(3), true}, tuple(use("bucket")))
}

func tuple(vs ...any) []any { return vs }

// Reading a flow rule's use takes nothing, whatever its algorithm.
func TestRuleUseTakesNothing(t *testing.T) {
	for _, alg := range []core.Algorithm{core.AlgorithmLeapArray, core.AlgorithmFixedWindow, core.AlgorithmSlidingLog,
		core.AlgorithmSlidingCounter, core.AlgorithmTokenBucket, core.AlgorithmLeakyBucket} {
		t.Run(string(alg), func(t *testing.T) {
			r := core.Rule{Name: "r", Resource: "GET /u", Kind: core.KindFlow, Limit: 4, Algorithm: alg}
			if alg == core.AlgorithmLeakyBucket {
				r.Limit, r.MaxWait = 1000, 0 // no wait: turns 1ms apart, one at a time
			}
			g, _ := newGuard(t, r)
			ctx := context.Background()
			passed := 0
			for range 10 {
				for range 3 {
					_ = ruleStats(t, g, "r") // reading between requests
				}
				if e, err := g.Enter(ctx, "GET /u"); err == nil {
					passed++
					e.Exit(nil)
				}
			}
			want := 4
			if alg == core.AlgorithmLeakyBucket {
				want = 1
			}
			assert.Equal(t, want, passed)
			st := ruleStats(t, g, "r")
			assert.True(t, st.HasUse)
			assert.Equal(t, st.Limit, st.Use, "all taken")
		})
	}
}

// TestRuleUseCountsRequestsNotLeases: a flow rule's Use is the requests of
// its window, with a limit large enough that CPUs lease shares of it in
// advance (the leap array's leases) and whatever the requests' CPUs, one
// window after the other. Before, Use counted the permits leased and not
// yet used: 12,037 after 12,000 requests.
func TestRuleUseCountsRequestsNotLeases(t *testing.T) {
	g, fc := newGuard(t, core.Rule{Name: "huge", Resource: "GET /h", Kind: core.KindFlow, Limit: 1 << 40})
	ctx := context.Background()
	var wg sync.WaitGroup
	for range 4 { // requests on several CPUs, as they come
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 3000 {
				e, err := g.Enter(ctx, "GET /h")
				if err == nil {
					e.Exit(nil)
				}
			}
		}()
	}
	wg.Wait()
	st := ruleStats(t, g, "huge")
	assert.Equal(t, []any{int64(1 << 40), int64(12_000), true}, tuple(st.Limit, st.Use, st.HasUse))

	fc.Advance(600 * time.Millisecond) // another bucket of the window
	for range 500 {
		e, err := g.Enter(ctx, "GET /h")
		require.NoError(t, err)
		e.Exit(nil)
	}
	assert.EqualValues(t, 12_500, ruleStats(t, g, "huge").Use)
	fc.Advance(600 * time.Millisecond) // the first bucket left the window
	assert.EqualValues(t, 500, ruleStats(t, g, "huge").Use)
}
