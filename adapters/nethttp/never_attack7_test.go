package sluicehttp_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	sluicehttp "github.com/sluicekit/sluice/adapters/nethttp"
	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/clock"
)

// TestNeverPassingRequestsGetNoRetryHint attacks the README's "403, with
// no retry hint, for a request no wait lets through (a limit of 0 for its
// value, a cost above what a rule ever holds)" over loopback, while the
// client's other requests pass and are limited: the never-passing ones get
// 403 with neither Retry-After nor RateLimit fields however often they
// come, and a problem+json body naming the rule; a request over the limit
// that a wait lets through gets 429 with Retry-After.
func TestNeverPassingRequestsGetNoRetryHint(t *testing.T) {
	fc := clock.NewFake(time.Hour)
	g, err := core.New(core.WithClock(fc), core.WithRules(core.Rule{
		Name: "per-user", Resource: "GET /x", Kind: core.KindHotspot, Param: "header:X-User-ID",
		Limit: 3, Window: time.Minute, Overrides: map[string]int64{"banned": 0},
	}))
	require.NoError(t, err)
	t.Cleanup(func() { _ = g.Close() })
	mux := http.NewServeMux()
	mux.HandleFunc("GET /x", func(w http.ResponseWriter, r *http.Request) {})
	cost := sluicehttp.WithCost(func(r *http.Request) int64 {
		n, _ := strconv.ParseInt(r.Header.Get("X-Cost"), 10, 64)
		return max(n, 1)
	})
	srv := httptest.NewServer(sluicehttp.Middleware(g, cost)(mux))
	t.Cleanup(srv.Close)
	get := func(user, cost string) *http.Response {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, srv.URL+"/x", nil)
		require.NoError(t, err)
		req.Header.Set("X-User-ID", user)
		req.Header.Set("X-Cost", cost)
		res, err := srv.Client().Do(req)
		require.NoError(t, err)
		body, err := io.ReadAll(res.Body)
		require.NoError(t, err)
		require.NoError(t, res.Body.Close())
		if res.StatusCode != http.StatusOK {
			assert.Equal(t, "application/problem+json", res.Header.Get("Content-Type"))
			assert.Contains(t, string(body), `"rule":"per-user"`)
		}
		return res
	}
	never := func(what string, res *http.Response) {
		t.Helper()
		assert.Equal(t, http.StatusForbidden, res.StatusCode, what)
		for _, h := range []string{"Retry-After", "RateLimit", "RateLimit-Policy"} {
			assert.Empty(t, res.Header.Values(h), "%s: %s", what, h)
		}
	}
	for range 5 {
		never("a limit of 0 for the value", get("banned", "1"))
		never("a cost above the limit", get("alice", "4"))
	}
	for range 3 {
		assert.Equal(t, http.StatusOK, get("alice", "1").StatusCode, "alice's own requests pass")
	}
	res := get("alice", "1")
	assert.Equal(t, http.StatusTooManyRequests, res.StatusCode, "over the limit, a wait lets it through")
	assert.NotEmpty(t, res.Header.Get("Retry-After"))
	never("a cost above the limit, while limited", get("alice", "4"))
	fc.Advance(time.Minute)
	assert.Equal(t, http.StatusOK, get("alice", "3").StatusCode, "a cost of the whole limit passes")
}
