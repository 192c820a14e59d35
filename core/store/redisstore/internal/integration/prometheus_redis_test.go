package integration_test

import (
	"context"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/clock"
	sluiceprom "github.com/sluicekit/sluice/core/prometheus"
	"github.com/sluicekit/sluice/core/store/redisstore"
	"github.com/sluicekit/sluice/core/store/redisstore/internal/redistest"
)

// TestPrometheusStoreMetrics scrapes the store metrics of a Guard whose rule
// is kept in a real Redis, before and after the Redis is killed.
func TestPrometheusStoreMetrics(t *testing.T) {
	redistest.QuietRedisLogs()
	srv := redistest.StartOwned(t)
	client := srv.Client(t, func(o *redis.Options) { o.MaxRetries = -1 })
	st, err := redisstore.New(client, redisstore.WithPrefix(redistest.UniquePrefix()), redisstore.WithTimeout(2*time.Second))
	require.NoError(t, err)
	defer st.Close()
	g, err := core.New(core.WithClock(clock.NewFake(time.Hour)), core.WithLogger(slog.New(slog.DiscardHandler)),
		core.WithStore("redis", st), core.WithStoreBreaker(1, 0), core.WithRules(
			core.Rule{Name: "shared", Resource: "GET /s", Kind: core.KindFlow, Limit: 100, Store: "redis", OnFailure: core.FailLocal, LocalLimit: 1},
		))
	require.NoError(t, err)
	defer g.Close()
	c, err := sluiceprom.NewCollector(g)
	require.NoError(t, err)

	enter := func() error {
		e, err := g.Enter(context.Background(), "GET /s")
		if err == nil {
			e.Exit(nil)
		}
		return err
	}
	stores := func(healthy, errors, fallbacks int) string {
		return strings.NewReplacer("{healthy}", strconv.Itoa(healthy), "{errors}", strconv.Itoa(errors), "{fallbacks}", strconv.Itoa(fallbacks)).Replace(`
# HELP sluice_store_healthy 1 while a shared store works, 0 while its breaker is open: from the failure that opens it until a call succeeds again.
# TYPE sluice_store_healthy gauge
sluice_store_healthy{sluice_store_name="redis"} {healthy}
# HELP sluice_store_errors_total Calls to a shared store that failed.
# TYPE sluice_store_errors_total counter
sluice_store_errors_total{sluice_store_name="redis"} {errors}
# HELP sluice_store_fallbacks_total Decisions made by failure policies instead of a shared store.
# TYPE sluice_store_fallbacks_total counter
sluice_store_fallbacks_total{sluice_store_name="redis"} {fallbacks}
`)
	}
	names := []string{"sluice_store_healthy", "sluice_store_errors_total", "sluice_store_fallbacks_total"}
	require.NoError(t, enter())
	require.NoError(t, enter())
	require.NoError(t, testutil.CollectAndCompare(c, strings.NewReader(stores(1, 0, 0)), names...))

	// Redis is gone: the first request finds out (one error, which opens
	// the store's breaker: WithStoreBreaker(1, 0)) and the local policy admits
	// it; the next two, within the backoff, do not call Redis, and the
	// local limit of 1 blocks them.
	srv.Kill()
	require.NoError(t, enter())
	require.Error(t, enter())
	require.Error(t, enter())
	require.NoError(t, testutil.CollectAndCompare(c, strings.NewReader(stores(0, 1, 3)), names...))
	require.NoError(t, testutil.CollectAndCompare(c, strings.NewReader(`
# HELP sluice_rule_fallbacks_total Decisions a rule with a store made by its failure policy because the store failed.
# TYPE sluice_rule_fallbacks_total counter
sluice_rule_fallbacks_total{sluice_rule_kind="flow",sluice_rule_name="shared",sluice_rule_resource="GET /s"} 3
`), "sluice_rule_fallbacks_total"))

	problems, err := testutil.CollectAndLint(c)
	require.NoError(t, err)
	assert.Empty(t, problems)
}
