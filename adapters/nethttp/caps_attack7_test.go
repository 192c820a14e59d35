package sluicehttp_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
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
	fc := clock.NewFake(time.Hour)
	g, err := core.New(core.WithClock(fc), core.WithRules(core.Rule{
		Name: "per-user", Resource: "GET /items/{id}", Kind: core.KindHotspot,
		Param: "header:X-User-ID", Limit: 3, Window: time.Hour,
	}))
	require.NoError(t, err)
	t.Cleanup(func() { _ = g.Close() })
	mux := http.NewServeMux()
	mux.HandleFunc("GET /items/{id}", func(w http.ResponseWriter, r *http.Request) {})
	srv := httptest.NewServer(sluicehttp.Middleware(g)(mux))
	t.Cleanup(srv.Close)
	get := func(lines ...string) int {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, srv.URL+"/items/1", nil)
		require.NoError(t, err)
		for _, l := range lines {
			req.Header.Add("X-User-ID", l)
		}
		res, err := srv.Client().Do(req)
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, res.Body)
		require.NoError(t, res.Body.Close())
		return res.StatusCode
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
