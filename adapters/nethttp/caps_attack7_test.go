package sluicehttp_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	sluicehttp "github.com/sluicekit/sluice/adapters/nethttp"
	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/clock"
)

// TestHostileHeadersDoNotEscapeAPerUserLimit attacks the caps of package
// extractors ("without letting a client slip past a limit") over real
// loopback HTTP: once alice has spent her 3 requests an hour, no way of
// writing her header gets her a fourth: her ID padded past the 256-byte
// cap with a new tail each time, among more values than the 16-value cap
// (each request's extra values new), on repeated header lines, between
// empty comma elements and spaces. The padded ID is limited under its
// prefix, and the requests of too many values share "(too many values)",
// whose 3 are spent too.
func TestHostileHeadersDoNotEscapeAPerUserLimit(t *testing.T) {
	_, send := perUser(t, time.Hour, nil)
	get := func(lines ...string) int {
		t.Helper()
		return send("1", lines...).StatusCode
	}

	padded := strings.Repeat("a", 256) // a 256-byte ID; longer ones are cut to it
	for i := range 3 {
		require.Equal(t, http.StatusOK, get(padded+fmt.Sprint("-tail", i)), "request %d", i)
	}
	for i := range 20 {
		assert.Equal(t, http.StatusTooManyRequests, get(padded+fmt.Sprint("-new-tail", i)), "a padded ID with a new tail %d is the same ID", i)
	}

	for i := range 3 {
		require.Equal(t, http.StatusOK, get("alice"), "request %d", i)
	}
	hostile := map[string][]string{
		"spaces and empty elements": {" , ,alice , "},
		"repeated lines":            {"new-1", "", "alice"},
		"alice last of 16 values":   {strings.Repeat("x,", 15) + "alice"},
		"alice with a long tail":    {"alice", strings.Repeat("z", 10000)},
	}
	for name, lines := range hostile {
		assert.Equal(t, http.StatusTooManyRequests, get(lines...), name)
	}

	// More than 16 values: the 16th and later share one value and its limit.
	many := func(i int) string {
		var vs []string
		for j := range 40 {
			vs = append(vs, fmt.Sprintf("u%d-%d", i, j))
		}
		return strings.Join(vs, ",")
	}
	passed := 0
	for i := range 20 {
		if get(many(i)) == http.StatusOK {
			passed++
		}
	}
	assert.Equal(t, 3, passed, "requests of too many values, each value new, share one limit of 3")
}

// TestNeverPassingRequestsGetNoRetryHint attacks the README's "403, with
// no retry hint, for a request no wait lets through (a limit of 0 for its
// value, a cost above what a rule ever holds)" over loopback, while the
// client's other requests pass and are limited: the never-passing ones get
// 403 with neither Retry-After nor RateLimit fields however often they
// come, and a problem+json body naming the rule; a request over the limit
// that a wait lets through gets 429 with Retry-After.
func TestNeverPassingRequestsGetNoRetryHint(t *testing.T) {
	fc, send := perUser(t, time.Minute, map[string]int64{"banned": 0})
	get := func(user, cost string) *http.Response { return send(cost, user) }
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

// perUser serves GET /items/{id} behind a hotspot rule on X-User-ID of
// limit 3 (overrides give theirs) on loopback, on a fake clock, with the
// request's cost read from X-Cost (default 1). It returns the clock and a
// func that sends a request with the X-User-ID lines given and cost,
// checks that a blocked one has a problem+json body naming the rule, and
// returns its response, its body read.
func perUser(t *testing.T, window time.Duration, overrides map[string]int64) (*clock.Fake, func(cost string, users ...string) *http.Response) {
	fc := clock.NewFake(time.Hour)
	g, err := core.New(core.WithClock(fc), core.WithRules(core.Rule{
		Name: "per-user", Resource: "GET /items/{id}", Kind: core.KindHotspot,
		Param: "header:X-User-ID", Limit: 3, Window: window, Overrides: overrides,
	}))
	require.NoError(t, err)
	t.Cleanup(func() { _ = g.Close() })
	mux := http.NewServeMux()
	mux.HandleFunc("GET /items/{id}", func(w http.ResponseWriter, r *http.Request) {})
	cost := sluicehttp.WithCost(func(r *http.Request) int64 {
		n, _ := strconv.ParseInt(r.Header.Get("X-Cost"), 10, 64)
		return max(n, 1)
	})
	srv := httptest.NewServer(sluicehttp.Middleware(g, cost)(mux))
	t.Cleanup(srv.Close)
	return fc, func(cost string, users ...string) *http.Response {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, srv.URL+"/items/1", nil)
		require.NoError(t, err)
		for _, u := range users {
			req.Header.Add("X-User-ID", u)
		}
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
}
