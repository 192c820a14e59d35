package redisstore_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/store/redisstore"
	"github.com/sluicekit/sluice/core/store/redisstore/internal/redistest"
)

// TestGuardMostlySlowRedisLatencyBudget runs a Guard on a real Redis
// behind a proxy that delays 3 replies in 4 by 60ms (three times the
// default latency budget, under the timeout) and lets the fourth through
// at once: a slow but live Redis whose latency jitters, the way a
// congested link or a loaded Redis answers. Three decisions in four wait
// 60ms; the budget promises that once the store's recent latency is over
// it, requests use the failure policy without waiting. The exact breaker
// must open within 100 calls.
//
// Failed before the breaker read 3 slow rounds in 4 (it read the fastest
// of 16: one fast reply in 16 kept it closed, 100 of 100 decisions went to
// Redis, the median 60ms).
func TestGuardMostlySlowRedisLatencyBudget(t *testing.T) {
	srv := redisstore.SharedRedis(t)
	proxy := newDelayProxy(t, srv.Addr)
	c := redis.NewClient(&redis.Options{Addr: proxy.ln.Addr().String(), ContextTimeoutEnabled: true, PoolSize: 1})
	t.Cleanup(func() { _ = c.Close() })
	st, err := redisstore.New(c, redisstore.WithPrefix(redistest.UniquePrefix()), redisstore.WithTimeout(10*time.Second))
	require.NoError(t, err)
	g, err := core.New(core.WithStore("redis", st), core.WithRules(
		core.Rule{Name: "exact", Resource: "GET /x", Kind: core.KindFlow, Limit: 1 << 40, Window: time.Hour, Store: "redis"}))
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = g.Close()
		_ = st.Close()
	})
	proxy.delay.Store(int64(60 * time.Millisecond))
	proxy.fastEvery.Store(4)
	var took []time.Duration
	opened := -1
	for i := range 100 {
		start := time.Now()
		e, err := g.Enter(context.Background(), "GET /x")
		require.NoError(t, err)
		e.Exit(nil)
		took = append(took, time.Since(start))
		if !g.Stores()[0].Healthy {
			opened = i
			break
		}
	}
	slices.Sort(took)
	t.Logf("%d decisions, median %v; breaker opened at call %d; %+v", len(took), took[len(took)/2], opened, g.Stores()[0].Modes[0])
	assert.GreaterOrEqual(t, opened, 0, "the exact breaker opens for a Redis slow 3 times in 4")
}
