package dashboard_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
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

func serve(t *testing.T, g *core.Guard, opts ...dashboard.Option) string {
	t.Helper()
	h, err := dashboard.New(g, opts...)
	require.NoError(t, err)
	mux := http.NewServeMux()
	mux.Handle("/debug/sluice/", http.StripPrefix("/debug/sluice", h))
	mux.Handle("/debug/sluice", http.StripPrefix("/debug/sluice", h))
	mux.Handle("/raw/", h) // mounted without StripPrefix
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.URL
}

func keys(m any) []string {
	var out []string
	for k := range m.(map[string]any) {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func TestSnapshotJSON(t *testing.T) {
	fc := clock.NewFake(time.Hour)
	g, err := core.New(core.WithClock(fc), core.WithLogger(slog.New(slog.DiscardHandler)), core.WithRules(
		core.Rule{Name: "hello-rate", Resource: "GET /hello", Kind: core.KindFlow, Limit: 2},
		core.Rule{Name: "fail-breaker", Resource: "GET /fail", Kind: core.KindBreaker, Strategy: "error-count", Threshold: 1, MinRequests: 1, OpenFor: 3 * time.Second},
		core.Rule{Resource: "*", Kind: core.KindConcurrency, Limit: 10},
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
	held, err := g.Enter(ctx, "GET /slow") // in flight while the snapshots are taken
	require.NoError(t, err)
	defer held.Exit(nil)
	e, err := g.Enter(ctx, "GET /fail")
	require.NoError(t, err)
	e.Exit(errors.New("boom"))
	_, err = g.Enter(ctx, "GET /fail")
	var be *core.BlockedError
	require.ErrorAs(t, err, &be)

	base := serve(t, g)
	for _, url := range []string{base + "/debug/sluice/api/snapshot", base + "/raw/api/snapshot"} {
		res, body := get(t, url)
		require.Equal(t, http.StatusOK, res.StatusCode)
		assert.Equal(t, "application/json", res.Header.Get("Content-Type"))
		assert.Equal(t, "no-store", res.Header.Get("Cache-Control"))
		assert.Equal(t, "nosniff", res.Header.Get("X-Content-Type-Options"))
		assert.NotContains(t, string(body), "<script>", "names are JSON-escaped")

		// The keys, as the page reads them.
		var raw map[string]any
		require.NoError(t, json.Unmarshal(body, &raw), "%s", body)
		assert.Equal(t, []string{"droppedEvents", "historyAt", "historyEnd", "resources", "rules", "stores", "time"}, keys(raw))
		res0 := raw["resources"].([]any)[0]
		assert.Equal(t, []string{"avgRtMs", "block", "complete", "error", "history", "inFlight", "minRtMs", "name", "pass", "peak", "total"}, keys(res0))
		assert.Equal(t, []string{"avgRtMs", "block", "error", "p50RtMs", "p99RtMs", "pass"}, keys(res0.(map[string]any)["history"]))
		assert.Equal(t, []string{"avgRtMs", "block", "blockedBy", "complete", "error", "pass", "rtMs"}, keys(res0.(map[string]any)["total"]))
		rules := raw["rules"].([]any)
		assert.Equal(t, []string{"algorithm", "blocked", "blockedTotal", "evaluated", "fallbacks", "history", "inFlight", "kind", "name", "resource", "resourceCount", "resources", "shadow", "shadowed", "shadowedTotal", "summary", "unmatched", "windowMs"}, keys(rules[0]))
		assert.Equal(t, []string{"blocked", "evaluated", "limit", "shadowed", "use"}, keys(rules[0].(map[string]any)["history"]))
		assert.Equal(t, []string{"bad", "requests", "retryAfterMs", "state", "trips"}, keys(rules[1].(map[string]any)["breaker"]))
		assert.Equal(t, []any{}, raw["stores"])

		// The values.
		var s dashboard.Snapshot
		require.NoError(t, json.Unmarshal(body, &s), "%s", body)
		assert.WithinDuration(t, time.Now(), s.Time, time.Minute)
		require.Len(t, s.Resources, 3)
		fail, hello, slow := s.Resources[0], s.Resources[1], s.Resources[2]
		assert.Equal(t, "GET /fail", fail.Name)
		assert.Equal(t, int64(1), fail.Error)
		assert.Equal(t, int64(1), fail.Block)
		assert.Equal(t, map[string]int64{"breaker": 1}, fail.Total.BlockedBy)
		assert.Equal(t, "GET /hello", hello.Name)
		assert.Equal(t, int64(2), hello.Pass)
		assert.Equal(t, int64(1), hello.Block)
		assert.Equal(t, int64(2), hello.Complete)
		assert.Equal(t, 4.0, hello.AvgRTMs)
		assert.Equal(t, 4.0, hello.MinRTMs)
		assert.Equal(t, dashboard.Totals{Pass: 2, Block: 1, Complete: 2, RTMs: 8, AvgRTMs: 4, BlockedBy: map[string]int64{"flow": 1}}, hello.Total)
		assert.Equal(t, "GET /slow", slow.Name)
		assert.Equal(t, int64(1), slow.InFlight)
		assert.Equal(t, map[string]int64{}, slow.Total.BlockedBy)

		require.Len(t, s.Rules, 3)
		hr := s.Rules[0]
		require.NotNil(t, hr.History)
		hr.History = nil
		assert.Equal(t, dashboard.Rule{Name: "hello-rate", Kind: "flow", Resource: "GET /hello", Summary: "2 per 1s, leap-array",
			Blocked: 1, BlockedTotal: 1, Evaluated: 3, Resources: []string{"GET /hello"}, ResourceCount: 1, WindowMs: 1000, Algorithm: "leap-array"}, hr)
		brk := s.Rules[1]
		assert.Equal(t, "fail-breaker", brk.Name)
		assert.Equal(t, "breaker", brk.Kind)
		assert.Equal(t, "error-count >= 1 of >= 1 in 10s, open 3s", brk.Summary)
		assert.Equal(t, int64(1), brk.BlockedTotal)
		require.NotNil(t, brk.Breaker)
		assert.Equal(t, dashboard.Breaker{State: "open", Requests: 1, Bad: 1, Trips: 1, RetryAfterMs: 3000}, *brk.Breaker)
		conc := s.Rules[2]
		assert.Equal(t, "concurrency:*", conc.Name)
		assert.Equal(t, "10 in flight", conc.Summary)
		assert.Equal(t, int64(1), conc.InFlight)
		assert.Equal(t, []string{"GET /fail", "GET /hello", "GET /slow"}, conc.Resources)
		assert.Equal(t, int64(3+1+2), conc.Evaluated)
		assert.Nil(t, conc.Breaker)
		assert.Equal(t, []dashboard.Store{}, s.Stores)
	}

	// A second on: the last second's counts are gone, the totals stay, the
	// breaker probes sooner.
	fc.Advance(time.Second)
	_, body := get(t, base+"/debug/sluice/api/snapshot")
	var s dashboard.Snapshot
	require.NoError(t, json.Unmarshal(body, &s))
	hello := s.Resources[1]
	assert.Equal(t, [3]int64{0, 0, 0}, [3]int64{hello.Pass, hello.Block, hello.Complete})
	assert.Equal(t, 0.0, hello.AvgRTMs)
	assert.Equal(t, int64(2), hello.Total.Pass)
	assert.Equal(t, int64(0), s.Rules[0].Blocked)
	assert.Equal(t, int64(1), s.Rules[0].BlockedTotal)
	assert.Equal(t, 2000.0, s.Rules[1].Breaker.RetryAfterMs)
}

// TestRuleResourcesAndUnmatched checks the resources listed per rule, at
// most 10 of them, and the unmatched flag.
func TestRuleResourcesAndUnmatched(t *testing.T) {
	fc := clock.NewFake(time.Hour)
	g, err := core.New(core.WithClock(fc), core.WithLogger(slog.New(slog.DiscardHandler)), core.WithUnmatchedAfter(time.Minute), core.WithRules(
		core.Rule{Name: "all", Resource: "GET /*", Kind: core.KindFlow, Limit: 1000},
		core.Rule{Name: "typo", Resource: "GET /helo", Kind: core.KindFlow, Limit: 10},
	))
	require.NoError(t, err)
	defer g.Close()
	const maxRuleResources = 10 // the resources a rule lists
	for i := range maxRuleResources + 2 {
		e, err := g.Enter(context.Background(), fmt.Sprintf("GET /r%02d", i))
		require.NoError(t, err)
		e.Exit(nil)
	}
	fc.Advance(time.Minute)
	base := serve(t, g)
	_, body := get(t, base+"/debug/sluice/api/snapshot")
	var s dashboard.Snapshot
	require.NoError(t, json.Unmarshal(body, &s), "%s", body)
	all, typo := s.Rules[0], s.Rules[1]
	assert.Len(t, all.Resources, maxRuleResources)
	assert.Equal(t, "GET /r00", all.Resources[0])
	assert.Equal(t, maxRuleResources+2, all.ResourceCount)
	assert.Equal(t, int64(maxRuleResources+2), all.Evaluated)
	assert.False(t, all.Unmatched)
	assert.Equal(t, []string{}, typo.Resources)
	assert.True(t, typo.Unmatched)
}

func TestSummary(t *testing.T) {
	g, err := core.New(core.WithLogger(slog.New(slog.DiscardHandler)), core.WithRules(
		core.Rule{Name: "a", Resource: "A", Kind: core.KindFlow, Limit: 100, Algorithm: "token-bucket", Burst: 20},
		core.Rule{Name: "b", Resource: "B", Kind: core.KindFlow, Limit: 10, Algorithm: "leaky-bucket", MaxWait: 500 * time.Millisecond},
		core.Rule{Name: "c", Resource: "C", Kind: core.KindFlow, Limit: 50, Warmup: 10 * time.Second, ColdFactor: 3},
		core.Rule{Name: "d", Resource: "D", Kind: core.KindHotspot, Param: "header:X-User-ID", Limit: 3, Overrides: map[string]int64{"vip": 30}},
		core.Rule{Name: "e", Resource: "E", Kind: core.KindHotspot, Param: "ip", Limit: 2, Algorithm: "concurrency"},
		core.Rule{Name: "f", Resource: "F", Kind: core.KindBreaker, Strategy: "slow-ratio", MaxRT: 200 * time.Millisecond, Threshold: 0.5, Probes: 2},
		core.Rule{Name: "g", Resource: "G", Kind: core.KindAdaptive, MaxLimit: 50, Priority: "header:X-Priority"},
		core.Rule{Name: "h", Resource: "H", Kind: core.KindSystem, Signal: core.SignalInFlight, Threshold: 200},
	))
	require.NoError(t, err)
	defer g.Close()
	_, body := get(t, serve(t, g)+"/debug/sluice/api/snapshot")
	var s dashboard.Snapshot
	require.NoError(t, json.Unmarshal(body, &s))
	var got []string
	for _, r := range s.Rules {
		got = append(got, r.Summary)
	}
	assert.Equal(t, []string{
		"100 per 1s, token-bucket, burst 20",
		"10 per 1s, leaky-bucket, wait <= 500ms",
		"50 per 1s, leap-array, warmup 10s",
		"3 per 1s per header:X-User-ID, token-bucket, 1 override",
		"2 in flight per ip",
		"slow-ratio (> 200ms) >= 0.5 of >= 10 in 10s, open 5s, 2 probes",
		"adaptive in flight, 2..50, priority by header:X-Priority",
		"inflight <= 200",
	}, got)
}

// urlRE finds absolute and protocol-relative URLs.
var urlRE = regexp.MustCompile(`(?i)(https?:|wss?:|ftp:)?//[a-z0-9.-]+`)

func TestPage(t *testing.T) {
	g, err := core.New(core.WithLogger(slog.New(slog.DiscardHandler)))
	require.NoError(t, err)
	defer g.Close()
	base := serve(t, g, dashboard.WithTitle(`checkout "<b>"`), dashboard.WithHistory(30))

	for _, path := range []string{"/debug/sluice/", "/raw/", "/raw/deeper/"} {
		res, body := get(t, base+path)
		require.Equal(t, http.StatusOK, res.StatusCode, path)
		assert.Equal(t, "text/html; charset=utf-8", res.Header.Get("Content-Type"))
		csp := res.Header.Get("Content-Security-Policy")
		for _, want := range []string{"default-src 'none'", "script-src 'self'", "style-src 'self'", "connect-src 'self'", "base-uri 'none'"} {
			assert.Contains(t, csp, want)
		}
		assert.NotContains(t, csp, "unsafe")
		assert.Contains(t, string(body), `<title>checkout &#34;&lt;b&gt;&#34;</title>`, "the title is escaped")
		assert.Contains(t, string(body), `<h1>checkout &#34;&lt;b&gt;&#34;</h1>`, "the title is escaped")
		assert.Contains(t, string(body), `data-history="30"`)
		assert.Contains(t, string(body), `src="dashboard.js"`, "relative references")
		assert.Contains(t, string(body), `href="dashboard.css"`, "relative references")
	}
	// Nothing refers to another host, not even as a namespace name, and
	// nothing is inline: the CSP would refuse it.
	for _, path := range []string{"/debug/sluice/", "/debug/sluice/dashboard.js", "/debug/sluice/dashboard.css", "/raw/dashboard.js"} {
		res, body := get(t, base+path)
		require.Equal(t, http.StatusOK, res.StatusCode, path)
		assert.Empty(t, urlRE.FindAllString(string(body), -1), "%s refers to another host", path)
		assert.NotRegexp(t, `(?i)@import|url\(|<script>|\sstyle=|\son[a-z]+=`, string(body), "%s", path)
		assert.Equal(t, "nosniff", res.Header.Get("X-Content-Type-Options"))
		assert.Equal(t, "no-store", res.Header.Get("Cache-Control"))
	}
	res, _ := get(t, base+"/debug/sluice/dashboard.js")
	assert.Equal(t, "text/javascript; charset=utf-8", res.Header.Get("Content-Type"))
	res, _ = get(t, base+"/debug/sluice/dashboard.css")
	assert.Equal(t, "text/css; charset=utf-8", res.Header.Get("Content-Type"))

	// Names are only ever written as text.
	_, js := get(t, base+"/debug/sluice/dashboard.js")
	assert.Contains(t, string(js), `? "api/snapshot" : "api/snapshot?after=" + encodeURIComponent(at)`, "relative")
	for _, sink := range []string{"innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "Function("} {
		assert.NotContains(t, string(js), sink)
	}

	// The prefix itself, stripped, is redirected to the page, relatively.
	res, _ = get(t, base+"/debug/sluice")
	assert.Equal(t, http.StatusMovedPermanently, res.StatusCode)
	assert.Equal(t, "./sluice/", res.Header.Get("Location"))
	res, err = http.Get(base + "/debug/sluice")
	require.NoError(t, err)
	res.Body.Close()
	assert.Equal(t, http.StatusOK, res.StatusCode)
	assert.Equal(t, "/debug/sluice/", res.Request.URL.Path)

	// Anything else is not found.
	for _, path := range []string{"/debug/sluice/favicon.ico", "/raw/sub", "/debug/sluice/api/snapshot/x", "/debug/sluice/api"} {
		res, _ := get(t, base+path)
		assert.Equal(t, http.StatusNotFound, res.StatusCode, path)
	}

	// HEAD: headers, no body.
	res, err = http.Head(base + "/debug/sluice/api/snapshot")
	require.NoError(t, err)
	res.Body.Close()
	assert.Equal(t, http.StatusOK, res.StatusCode)
	assert.Equal(t, "application/json", res.Header.Get("Content-Type"))

	for _, path := range []string{"/debug/sluice/api/snapshot", "/debug/sluice/", "/raw/dashboard.js"} {
		for _, method := range []string{http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodOptions} {
			req, _ := http.NewRequest(method, base+path, strings.NewReader("x"))
			res, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			res.Body.Close()
			assert.Equal(t, http.StatusMethodNotAllowed, res.StatusCode, "%s %s", method, path)
			assert.Equal(t, "GET, HEAD", res.Header.Get("Allow"))
		}
	}
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

// TestSnapshotHistory checks that the first snapshot brings the history the
// Guard kept since the handler was made, within WithHistory, and later ones
// the points after historyAt.
func TestSnapshotHistory(t *testing.T) {
	fc := clock.NewFake(time.Hour)
	g, err := core.New(core.WithClock(fc), core.WithLogger(slog.New(slog.DiscardHandler)), core.WithRules(
		core.Rule{Name: "hello-rate", Resource: "GET /hello", Kind: core.KindFlow, Limit: 2},
		core.Rule{Name: "slow-conc", Resource: "GET /slow", Kind: core.KindConcurrency, Limit: 5},
		core.Rule{Name: "hello-shadow", Resource: "GET /hello", Kind: core.KindFlow, Limit: 1, Shadow: true},
	))
	require.NoError(t, err)
	defer g.Close()
	base := serve(t, g, dashboard.WithHistory(4))
	ctx := context.Background()
	held, err := g.Enter(ctx, "GET /slow")
	require.NoError(t, err)
	defer held.Exit(nil)
	for range 5 {
		for range 3 {
			if e, err := g.Enter(ctx, "GET /hello"); err == nil {
				e.Exit(nil)
			}
		}
		fc.Advance(time.Second)
		// Sample the second that ended now: the Guard's goroutine, waking
		// later, would count some of the next second's requests in it.
		g.History(0)
	}
	snapshot := func(query string) (dashboard.Snapshot, string) {
		t.Helper()
		res, body := get(t, base+"/debug/sluice/api/snapshot"+query)
		require.Equal(t, http.StatusOK, res.StatusCode, "%s", body)
		var s dashboard.Snapshot
		require.NoError(t, json.Unmarshal(body, &s), "%s", body)
		return s, string(body)
	}
	s, body := snapshot("")
	assert.Equal(t, (time.Hour + 5*time.Second).Milliseconds(), s.HistoryAt)
	assert.WithinDuration(t, s.Time, s.HistoryEnd, time.Millisecond, "the clock is at the end of the last second")
	require.Len(t, s.Resources, 2)
	hello := s.Resources[0].History
	require.NotNil(t, hello)
	assert.Equal(t, dashboard.Series{2, 2, 2, 2}, hello["pass"], "the last 4 seconds (WithHistory)")
	assert.Equal(t, dashboard.Series{1, 1, 1, 1}, hello["block"])
	assert.Contains(t, body, `"avgRtMs":[0,0,0,0]`)
	assert.Contains(t, body, `"avgRtMs":[null,null,null,null]`, "GET /slow: none completed")
	rate, conc := s.Rules[0].History, s.Rules[1].History
	assert.Equal(t, dashboard.Series{2, 2, 2, 2}, rate["limit"])
	assert.Equal(t, dashboard.Series{1, 1, 1, 1}, rate["blocked"])
	assert.Equal(t, dashboard.Series{3, 3, 3, 3}, rate["evaluated"])
	assert.Equal(t, dashboard.Series{1, 1, 1, 1}, conc["use"])
	assert.Equal(t, dashboard.Series{5, 5, 5, 5}, conc["limit"])
	assert.Equal(t, 1000.0, s.Rules[0].WindowMs)
	assert.False(t, s.Rules[0].Shadow)
	shadow := s.Rules[2]
	assert.True(t, shadow.Shadow)
	assert.Positive(t, shadow.ShadowedTotal)
	assert.Equal(t, dashboard.Series{0, 0, 0, 0}, shadow.History["blocked"])
	for _, v := range shadow.History["shadowed"] {
		assert.Positive(t, v, "would have blocked: %v", shadow.History["shadowed"])
	}

	// The next poll: nothing new until a second ends.
	at := fmt.Sprint(s.HistoryAt)
	s, _ = snapshot("?after=" + at)
	assert.Equal(t, dashboard.Series{}, s.Resources[0].History["pass"])
	e, err := g.Enter(ctx, "GET /hello")
	require.NoError(t, err)
	fc.Advance(250 * time.Millisecond)
	e.Exit(nil)
	fc.Advance(750 * time.Millisecond)
	s, _ = snapshot("?after=" + at)
	assert.Equal(t, dashboard.Series{1}, s.Resources[0].History["pass"])
	assert.Equal(t, dashboard.Series{250}, s.Resources[0].History["avgRtMs"])
	assert.Equal(t, dashboard.Series{250}, s.Resources[0].History["p50RtMs"], "one request: the average")
	assert.Equal(t, dashboard.Series{2}, s.Rules[0].History["limit"])
	s, _ = snapshot("?after=0")
	assert.Len(t, s.Resources[0].History["pass"], 6, "all the Guard kept")

	for _, bad := range []string{"x", "1.5", ""} {
		res, body := get(t, base+"/debug/sluice/api/snapshot?after="+bad)
		assert.Equal(t, http.StatusBadRequest, res.StatusCode, "after=%s", bad)
		assert.Contains(t, string(body), "after: must be an integer")
	}
}

// TestSnapshotTopBlocked checks the values a hotspot rule blocked most,
// with core.WithTopBlockedValues: request values, JSON-escaped.
func TestSnapshotTopBlocked(t *testing.T) {
	const hostile = `<img src=x onerror="window.pwned=1">`
	g, err := core.New(core.WithLogger(slog.New(slog.DiscardHandler)), core.WithTopBlockedValues(3), core.WithRules(
		core.Rule{Name: "per-user", Resource: "GET /items", Kind: core.KindHotspot, Param: "header:X-User-ID", Limit: 1, Window: time.Hour},
	))
	require.NoError(t, err)
	defer g.Close()
	for _, u := range []struct {
		user string
		n    int
	}{{"mallory", 4}, {hostile, 3}, {"alice", 1}} {
		for range u.n {
			if e, err := g.Enter(context.Background(), "GET /items", core.WithParams(core.ParamMap{"header:X-User-ID": {u.user}})); err == nil {
				e.Exit(nil)
			}
		}
	}
	_, body := get(t, serve(t, g)+"/debug/sluice/api/snapshot")
	assert.NotContains(t, string(body), "<img", "JSON-escaped")
	var s dashboard.Snapshot
	require.NoError(t, json.Unmarshal(body, &s))
	assert.Equal(t, []core.BlockedValue{{Value: "mallory", Blocked: 3}, {Value: hostile, Blocked: 2}}, s.Rules[0].TopBlocked)
}
