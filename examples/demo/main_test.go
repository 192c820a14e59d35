package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/sluicekit/sluice/core"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// requireNoLeaks fails t when goroutines started after base are still
// running a few seconds after the test body.
func requireNoLeaks(t *testing.T, base int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > base {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("goroutines left running: %d, before the run: %d\n%s",
				runtime.NumGoroutine(), base, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// rowRE matches a row of the table: sec, what, name, passed, blocked and,
// for patterns, failed.
var rowRE = regexp.MustCompile(`^ *(\d+|all)?  (rule|pattern) +(\S+) +(\d+) +(\d+)(?: +(\d+))?$`)

type row struct {
	sec, what, name         string
	passed, blocked, failed int
}

func parseRows(t *testing.T, out string) []row {
	t.Helper()
	var rows []row
	sec := ""
	for _, line := range strings.Split(out, "\n") {
		m := rowRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		if m[1] != "" {
			sec = m[1]
		}
		r := row{sec: sec, what: m[2], name: m[3], failed: -1}
		r.passed, _ = strconv.Atoi(m[4])
		r.blocked, _ = strconv.Atoi(m[5])
		if m[6] != "" {
			r.failed, _ = strconv.Atoi(m[6])
		}
		rows = append(rows, r)
	}
	return rows
}

func TestRunEmbeddedRulesEveryRuleBlocksAndHolds(t *testing.T) {
	base := runtime.NumGoroutine()
	var out strings.Builder
	require.NoError(t, run(t.Context(), &out, config{Duration: 2 * time.Second}))
	s := out.String()
	t.Log("\n" + s)

	for i, line := range strings.Split(s, "\n") {
		assert.LessOrEqual(t, utf8.RuneCountInString(line), 80, "line %d is wider than 80 columns: %q", i+1, line)
	}
	assert.Regexp(t, `(?m)^sluice demo: serving http://127\.0\.0\.1:\d+ for 2s; try it with$`, s)
	assert.Contains(t, s, "rules (embedded rules.yaml):")
	assert.Regexp(t, `(?m)^  hello-rate +flow on GET /hello: 50 per 1s \(leap-array\)$`, s)
	assert.Regexp(t, `(?m)^  per-user +hotspot on GET /items/\{id\}: 10 per 1s per header:X-User-ID$`, s)
	assert.Regexp(t, `(?m)^ +\(token-bucket\), overrides vip=100$`, s)
	assert.Regexp(t, `(?m)^  slow-inflight +concurrency on GET /slow: 4 in flight$`, s)
	assert.Contains(t, s, "traffic, all at once:")
	for _, p := range []string{"steady", "bursty", "hot-user"} {
		assert.Regexp(t, `(?m)^  `+p+` +\S`, s)
	}

	// The table: per second, then all, each with the three rules and the
	// three patterns in order.
	rules := []string{"hello-rate", "per-user", "slow-inflight"}
	want := []string{"rule hello-rate", "rule per-user", "rule slow-inflight", "pattern steady", "pattern bursty", "pattern hot-user"}
	rows := parseRows(t, s)
	require.Len(t, rows, 3*len(want), "two seconds and the summary")
	blocked := map[string]int{}
	for i, r := range rows {
		assert.Equal(t, []string{"1", "2", "all"}[i/len(want)], r.sec, "row %d", i)
		assert.Equal(t, want[i%len(want)], r.what+" "+r.name, "row %d", i)
		if r.what == "pattern" {
			assert.Zero(t, r.failed, "row %d: %s failed requests", i, r.name)
		} else {
			assert.Equal(t, -1, r.failed, "row %d: rules have no failed column", i)
		}
		if r.sec != "all" && r.what == "rule" {
			blocked[r.name] += r.blocked
		}
	}
	totals := rows[2*len(want):]
	for i, name := range rules {
		assert.Positive(t, totals[i].passed, "%s passed nothing", name)
		assert.Positive(t, totals[i].blocked, "%s blocked nothing", name)
		assert.Equal(t, totals[i].blocked, blocked[name], "%s: the seconds add up to the total", name)
	}
	// Steady traffic stays below the limit: it loses a request only when a
	// burst has filled the window and its arrivals bunch up.
	assert.Greater(t, totals[3].passed, totals[3].blocked, "steady traffic mostly passes")
	assert.Positive(t, totals[4].blocked, "bursts go over the limits")
	assert.Positive(t, totals[5].blocked, "the hot user is limited")

	// Two seconds of traffic, and the time the last requests take to end:
	// on a busy host that may be more than a second.
	assert.Regexp(t, `(?m)^summary: \d+ requests in [2-9]\.\ds$`, s)
	assert.Regexp(t, `(?m)^  hello-rate +held  \d+ passed of \d+ allowed \(\d+%; 50 per 1s window,\s+\d+\s+windows\s+touched\s+in\s+\d+\.\ds\)$`, s)
	assert.Regexp(t, `(?m)^  per-user +held  mallory: \d+ passed of \d+ allowed \(\d+%; a full bucket\s+of\s+10,\s+then\s+10\s+per\s+1s\s+for\s+\d+\.\ds\);\s+others\s+0\s+blocked$`, s)
	assert.Regexp(t, `(?m)^  slow-inflight +held  peak [1-4] in flight vs limit 4$`, s)
	requireNoLeaks(t, base)
}

func TestRunRulesFileJSON(t *testing.T) {
	base := runtime.NumGoroutine()
	path := filepath.Join(t.TempDir(), "rules.json")
	require.NoError(t, os.WriteFile(path, []byte(`{"rules": [
		{"name": "all-get", "resource": "GET /*", "kind": "flow", "limit": 30, "algorithm": "token-bucket", "burst": 5},
		{"name": "per-ip", "resource": "*", "kind": "hotspot", "param": "ip", "limit": 1000},
		{"name": "unused", "resource": "POST /nothing", "kind": "concurrency", "limit": 1}
	]}`), 0o600))
	var out strings.Builder
	require.NoError(t, run(t.Context(), &out, config{Duration: 1200 * time.Millisecond, RulesFile: path}))
	s := out.String()
	t.Log("\n" + s)
	assert.Contains(t, s, "rules ("+path+"):")
	assert.Regexp(t, `(?m)^  all-get +flow on GET /\*: 30 per 1s \(token-bucket, burst 5\)$`, s)
	rows := parseRows(t, s)
	require.Len(t, rows, 3*6, "two seconds (the second one cut short) and the summary")
	assert.Equal(t, "2", rows[6].sec)
	assert.Equal(t, "all", rows[12].sec)
	assert.Positive(t, rows[12].blocked, "all-get blocks the demo's traffic")
	// 1.2s: at most 30 x (2 + 1) + 5 pass the glob rule over all routes.
	assert.Regexp(t, `(?m)^  all-get +held  \d+ passed of \d+ allowed \(\d+%; a full bucket of 35, then 30$`, s)
	assert.Regexp(t, `(?m)^  per-ip +n/a +the demo does not count per value of ip$`, s)
	assert.Regexp(t, `(?m)^  unused +n/a +no traffic$`, s)
	requireNoLeaks(t, base)
}

func TestRunServesOnAddr(t *testing.T) {
	base := runtime.NumGoroutine()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var out strings.Builder
	done := make(chan error, 1)
	go func() { done <- run(ctx, &out, config{Duration: time.Minute, Addr: addr}) }()

	// A user's curl while the demo runs: answered by the protected server.
	client := &http.Client{Timeout: 5 * time.Second}
	defer client.CloseIdleConnections()
	var resp *http.Response
	require.Eventually(t, func() bool {
		resp, err = client.Get("http://" + addr + "/items/7")
		return err == nil
	}, 5*time.Second, 10*time.Millisecond)
	body := make([]byte, 100)
	n, _ := resp.Body.Read(body)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, `{"id":"7"}`+"\n", string(body[:n]))

	// Interrupting the demo ends it early with a summary and no error.
	cancel()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("run did not return after its context ended")
	}
	s := out.String()
	assert.Contains(t, s, "sluice demo: serving http://"+addr+" for 1m0s")
	assert.Regexp(t, `(?m)^summary: \d+ requests in \d+\.\ds \(interrupted\)$`, s)
	requireNoLeaks(t, base)
}

func TestRunReportsBadConfig(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
		return path
	}
	for _, tc := range []struct {
		name string
		cfg  config
		want []string
	}{{
		name: "negative limit in JSON",
		cfg:  config{RulesFile: write("bad.json", `{"rules":[{"name":"r1","resource":"x","kind":"flow","limit":-5}]}`)},
		want: []string{"rules file", "bad.json", "rules[0] (r1)", "limit must be >= 0, got -5"},
	}, {
		name: "unknown algorithm in YAML",
		cfg: config{RulesFile: write("bad.yaml", "rules:\n  - resource: \"GET /hello\"\n    kind: flow\n    limit: 5\n"+
			"  - name: per-user\n    resource: \"*\"\n    kind: hotspot\n    param: \"header:X-User-ID\"\n    limit: 1\n    algorithm: magic\n")},
		want: []string{"bad.yaml", "rules[1] (per-user)", "algorithm", "magic"},
	}, {
		name: "missing file",
		cfg:  config{RulesFile: filepath.Join(dir, "nope.yaml")},
		want: []string{"nope.yaml"},
	}, {
		name: "bad duration",
		cfg:  config{Duration: -time.Second},
		want: []string{"-duration must be > 0, got -1s"},
	}, {
		name: "bad address",
		cfg:  config{Addr: "127.0.0.1:99999"},
		want: []string{`-addr "127.0.0.1:99999"`},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.cfg.Duration == 0 {
				tc.cfg.Duration = time.Second
			}
			var out strings.Builder
			err := run(t.Context(), &out, tc.cfg)
			require.Error(t, err)
			for _, w := range tc.want {
				assert.Contains(t, err.Error(), w)
			}
			assert.Empty(t, out.String(), "nothing is served or printed")
		})
	}
}

func TestBlockedBy(t *testing.T) {
	h := http.Header{}
	assert.Equal(t, "per-user", blockedBy(h, []byte(`{"type":"about:blank","rule":"per-user","status":429}`)))
	h.Set("RateLimit", `"hello-rate";r=0;t=1`)
	assert.Equal(t, "hello-rate", blockedBy(h, []byte(`not json`)))
	assert.Equal(t, "per-user", blockedBy(h, []byte(`{"rule":"per-user"}`)), "the body wins")
	for v, want := range map[string]string{
		`"a\"b";r=0;t=1, "c";r=5`: `a"b`,
		`plain;r=0`:               "plain",
		`tok, other`:              "tok",
		`"unterminated`:           "",
		``:                        "",
	} {
		assert.Equal(t, want, rateLimitItem(v), "%q", v)
	}
}

func TestAllowed(t *testing.T) {
	tb := core.Rule{Algorithm: "token-bucket", Window: time.Second}
	// A token bucket of 10/s starts with 10 and refills 10 per second.
	assert.Equal(t, int64(30), allowed(tb, 10, 2*time.Second))
	assert.Equal(t, int64(31), allowed(tb, 10, 2010*time.Millisecond), "refill rounded up")
	tb.Burst = 5
	assert.Equal(t, int64(30), allowed(tb, 10, 1500*time.Millisecond))
	assert.Equal(t, int64(5), allowed(tb, 0, time.Minute), "an override of 0 still has the burst")
	// Windowed algorithms: a run overlaps one window more than it spans.
	la := core.Rule{Algorithm: "leap-array", Window: time.Second}
	assert.Equal(t, int64(150), allowed(la, 50, 2*time.Second))
	assert.Equal(t, int64(200), allowed(la, 50, 2010*time.Millisecond))
	assert.Equal(t, int64(0), allowed(la, 0, time.Minute))
	la.Window = 2 * time.Second
	assert.Equal(t, int64(100), allowed(la, 50, time.Second))
}

func TestRuleRoutes(t *testing.T) {
	rules := []core.Rule{
		{Name: "all", Resource: "*", Kind: core.KindConcurrency, Limit: 1},
		{Name: "items", Resource: "GET /items/*", Kind: core.KindConcurrency, Limit: 1},
		{Name: "slow", Resource: "/slow", Kind: core.KindConcurrency, Limit: 1},
		{Name: "none", Resource: "POST /hello", Kind: core.KindConcurrency, Limit: 1},
	}
	routes, err := ruleRoutes(rules, routeHello, routeItems, routeSlow)
	require.NoError(t, err)
	assert.Equal(t, []string{routeHello, routeItems, routeSlow}, routes["all"])
	assert.Equal(t, []string{routeItems}, routes["items"])
	assert.Equal(t, []string{routeSlow}, routes["slow"])
	assert.Empty(t, routes["none"])
}

func TestCheckFailsWhenMorePassThanAllowed(t *testing.T) {
	rs := &ruleStat{}
	rs.rule = core.Rule{Kind: core.KindFlow, Algorithm: "leap-array", Limit: 10, Window: time.Second}
	for range 31 {
		rs.passed.add()
	}
	c := check(rs, 2*time.Second)
	assert.Equal(t, statusFail, c.status)
	assert.Equal(t, "31 passed, MORE than the 30 allowed (10 per 1s window, 3 windows touched in 2.0s)", c.text)
	rs.rule = core.Rule{Kind: core.KindConcurrency, Limit: 3}
	rs.peak.Store(4)
	assert.Equal(t, checkResult{statusFail, "peak 4 in flight vs limit 3"}, check(rs, time.Second))
}

func TestReportFitsEightyColumns(t *testing.T) {
	var out strings.Builder
	long := strings.Repeat("x", 60)
	st := newStats(nil, nil, demoPatterns())
	r := newReport(&out, st)
	r.item(long, strings.Repeat("word ", 40))
	r.item("n", fmt.Sprintf("%s\x1b[31m", long))
	for _, line := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
		assert.LessOrEqual(t, utf8.RuneCountInString(line), 80, "%q", line)
		assert.NotContains(t, line, "\x1b", "control characters are not printed")
	}
}
