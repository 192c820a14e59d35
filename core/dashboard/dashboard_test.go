package dashboard_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/clock"
	"github.com/sluicekit/sluice/core/dashboard"
)

func get(t *testing.T, url string) (*http.Response, []byte) {
	t.Helper()
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := client.Get(url)
	require.NoError(t, err)
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res, body
}

const hostile = `<script>alert(1)</script>`

func serve(t *testing.T, g *core.Guard, opts ...dashboard.Option) string {
	t.Helper()
	h, err := dashboard.New(g, opts...)
	require.NoError(t, err)
	mux := http.NewServeMux()
	mux.Handle("/debug/sluice/", http.StripPrefix("/debug/sluice", h))
	mux.Handle("/raw/", h) // mounted without StripPrefix
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestSnapshotJSON(t *testing.T) {
	fc := clock.NewFake(time.Hour)
	g, err := core.New(core.WithClock(fc), core.WithLogger(slog.New(slog.DiscardHandler)), core.WithRules(
		core.Rule{Name: "hello-rate", Resource: "GET /hello", Kind: core.KindFlow, Limit: 2},
		core.Rule{Name: hostile, Resource: "GET /fail", Kind: core.KindBreaker, Strategy: "error-count", Threshold: 1, MinRequests: 1, OpenFor: 3 * time.Second},
	))
	require.NoError(t, err)
	defer g.Close()
	ctx := context.Background()
	for range 3 {
		if e, err := g.Enter(ctx, "GET /hello"); err == nil {
			fc.Advance(4 * time.Millisecond)
			e.Exit(nil)
		}
	}
	e, err := g.Enter(ctx, "GET /fail")
	require.NoError(t, err)
	e.Exit(errors.New("boom"))
	_, err = g.Enter(ctx, "GET /fail")
	require.Error(t, err)

	base := serve(t, g)
	for _, url := range []string{base + "/debug/sluice/api/snapshot", base + "/raw/api/snapshot"} {
		res, body := get(t, url)
		require.Equal(t, http.StatusOK, res.StatusCode)
		assert.Equal(t, "application/json", res.Header.Get("Content-Type"))
		assert.Equal(t, "no-store", res.Header.Get("Cache-Control"))
		var s dashboard.Snapshot
		require.NoError(t, json.Unmarshal(body, &s), "%s", body)
		require.Len(t, s.Resources, 2)
		hello := s.Resources[1]
		assert.Equal(t, "GET /hello", hello.Name)
		assert.Equal(t, int64(2), hello.Pass)
		assert.Equal(t, int64(1), hello.Block)
		assert.Equal(t, 4.0, hello.AvgRTMs)
		assert.Equal(t, map[string]int64{"flow": 1}, hello.Total.BlockedBy)
		assert.Equal(t, int64(1), s.Resources[0].Error)
		require.Len(t, s.Rules, 2)
		assert.Equal(t, "2 per 1s, leap-array", s.Rules[0].Summary)
		assert.Equal(t, int64(1), s.Rules[0].Blocked)
		require.NotNil(t, s.Rules[1].Breaker)
		assert.Equal(t, hostile, s.Rules[1].Name)
		assert.Equal(t, "open", s.Rules[1].Breaker.State)
		assert.Equal(t, 3000.0, s.Rules[1].Breaker.RetryAfterMs)
		assert.Equal(t, []dashboard.Store{}, s.Stores)
	}
}

func TestPage(t *testing.T) {
	g, err := core.New(core.WithLogger(slog.New(slog.DiscardHandler)))
	require.NoError(t, err)
	defer g.Close()
	base := serve(t, g, dashboard.WithTitle(`checkout "<b>"`), dashboard.WithHistory(30))

	res, body := get(t, base+"/debug/sluice/")
	require.Equal(t, http.StatusOK, res.StatusCode)
	assert.Equal(t, "text/html; charset=utf-8", res.Header.Get("Content-Type"))
	csp := res.Header.Get("Content-Security-Policy")
	assert.Contains(t, csp, "default-src 'none'")
	assert.Contains(t, csp, "script-src 'self'")
	assert.Contains(t, string(body), `<title>checkout &#34;&lt;b&gt;&#34;</title>`, "the title is escaped")
	assert.Contains(t, string(body), `data-history="30"`)
	// Nothing is loaded from elsewhere.
	for _, path := range []string{"/debug/sluice/", "/debug/sluice/dashboard.js", "/debug/sluice/dashboard.css"} {
		res, body := get(t, base+path)
		require.Equal(t, http.StatusOK, res.StatusCode, path)
		assert.NotRegexp(t, regexp.MustCompile(`(?i)(src|href)\s*=\s*"?(https?:)?//|url\(|@import|fetch\(\s*"(https?:)?//`), string(body), "%s refers to another host", path)
		assert.Equal(t, "nosniff", res.Header.Get("X-Content-Type-Options"))
	}
	// Names are only ever written as text.
	_, js := get(t, base+"/debug/sluice/dashboard.js")
	assert.Contains(t, string(js), `fetch("api/snapshot"`)
	assert.NotContains(t, string(js), "innerHTML")
	assert.NotContains(t, string(js), "insertAdjacentHTML")

	// The page's URL must end in a slash for its relative references
	// (ServeMux redirects /debug/sluice itself).
	res, _ = get(t, base+"/raw/sub")
	assert.Equal(t, http.StatusMovedPermanently, res.StatusCode)
	assert.Equal(t, "/raw/sub/", res.Header.Get("Location"))

	req, _ := http.NewRequest(http.MethodPost, base+"/debug/sluice/api/snapshot", nil)
	res, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	res.Body.Close()
	assert.Equal(t, http.StatusMethodNotAllowed, res.StatusCode)
	assert.Equal(t, "GET, HEAD", res.Header.Get("Allow"))
}

func TestOptions(t *testing.T) {
	g, err := core.New(core.WithLogger(slog.New(slog.DiscardHandler)))
	require.NoError(t, err)
	defer g.Close()
	for _, tc := range []struct {
		opt  dashboard.Option
		want string
	}{
		{dashboard.WithTitle(""), `WithTitle(""): must be 1 to 200 bytes`},
		{dashboard.WithTitle("a\nb"), `WithTitle("a\nb")`},
		{dashboard.WithHistory(1), "WithHistory(1): must be between 2 and 3600"},
		{dashboard.WithHistory(3601), "WithHistory(3601)"},
		{nil, "nil option"},
	} {
		_, err := dashboard.New(g, tc.opt)
		assert.ErrorContains(t, err, tc.want)
	}
	_, err = dashboard.New(nil)
	assert.ErrorContains(t, err, "guard is nil")
}
