package redisstore_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/health"
	"github.com/sluicekit/sluice/core/store/redisstore"
	"github.com/sluicekit/sluice/core/store/redisstore/internal/redistest"
)

// TestReadinessFollowsRedis serves the readiness handler of a Guard whose
// rule is kept in a real Redis, and kills and restarts that Redis: with
// RequireStores the instance is not ready (503) while the store's breaker is
// open, and ready again once Redis answers.
func TestReadinessFollowsRedis(t *testing.T) {
	srv := redistest.StartOwned(t)
	rule := core.Rule{Name: "global", Resource: "GET /x", Kind: core.KindFlow, Limit: 1 << 40, Window: time.Hour,
		Store: "redis", OnFailure: core.FailOpen}
	in := newInstance(t, srv, redistest.UniquePrefix(), []redisstore.Option{redisstore.WithTimeout(200 * time.Millisecond)}, core.WithStoreBreaker(0, 50*time.Millisecond), core.WithRules(rule))
	h, err := health.Handler(in.g, health.RequireStores())
	require.NoError(t, err)
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)

	type storeState struct {
		Name              string
		Healthy           bool
		Errors, Fallbacks int64
	}
	type report struct { // the JSON of health.Handler (see its package doc)
		Ready    bool
		Problems []string
		Stores   []storeState
		Rules    struct{ Count int }
	}
	ready := func() (int, report) {
		res, err := ts.Client().Get(ts.URL)
		require.NoError(t, err)
		defer res.Body.Close()
		var rep report
		require.NoError(t, json.NewDecoder(res.Body).Decode(&rep))
		return res.StatusCode, rep
	}
	enter := func() {
		e, err := in.g.Enter(context.Background(), "GET /x")
		require.NoError(t, err, "fail open admits")
		e.Exit(nil)
	}

	enter()
	status, rep := ready()
	assert.Equal(t, http.StatusOK, status)
	assert.Equal(t, []storeState{{Name: "redis", Healthy: true}}, rep.Stores)
	assert.Equal(t, 1, rep.Rules.Count)

	srv.Kill()
	require.Eventually(t, func() bool { enter(); return !in.g.Stores()[0].Healthy }, 60*time.Second, time.Millisecond,
		"the store's breaker opens once Redis is gone")
	status, rep = ready()
	assert.Equal(t, http.StatusServiceUnavailable, status)
	assert.False(t, rep.Ready)
	assert.Equal(t, []string{"store redis is down"}, rep.Problems)
	assert.Positive(t, rep.Stores[0].Errors)

	srv.Restart(t)
	require.Eventually(t, func() bool { enter(); return in.g.Stores()[0].Healthy }, 60*time.Second, 10*time.Millisecond,
		"a probe closes the breaker once Redis is back")
	status, rep = ready()
	assert.Equal(t, http.StatusOK, status)
	assert.True(t, rep.Ready)
}
