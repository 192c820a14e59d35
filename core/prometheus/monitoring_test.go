package sluiceprom_test

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core"
	sluiceprom "github.com/sluicekit/sluice/core/prometheus"
	"github.com/sluicekit/sluice/core/rulesfile"
)

// metricRE finds the sluice metric names a query names.
var metricRE = regexp.MustCompile(`\bsluice_[a-z_]+\b`)

// labelNames are the collector's labels, which metricRE matches too
// (sluice_breaker_state is a metric as well).
var labelNames = map[string]bool{"sluice_resource": true, "sluice_result": true, "sluice_rule_name": true,
	"sluice_rule_kind": true, "sluice_rule_resource": true, "sluice_store_name": true}

// collectorMetrics returns the names of the metrics a Collector with a
// rules file watcher describes, and those of the series of its histograms.
func collectorMetrics(t *testing.T) []string {
	g, err := core.New()
	require.NoError(t, err)
	t.Cleanup(func() { _ = g.Close() })
	path := filepath.Join(t.TempDir(), "rules.yaml")
	require.NoError(t, os.WriteFile(path, []byte("rules: []\n"), 0o600))
	w, err := rulesfile.NewWatcher(g, path, rulesfile.WithLogger(slog.New(slog.DiscardHandler)))
	require.NoError(t, err)
	c, err := sluiceprom.NewCollector(g, sluiceprom.WithWatcher(w))
	require.NoError(t, err)
	ch := make(chan *prometheus.Desc, 64)
	c.Describe(ch)
	close(ch)
	fq := regexp.MustCompile(`fqName: "([^"]+)"`)
	var names []string
	for d := range ch {
		m := fq.FindStringSubmatch(d.String())
		require.NotNil(t, m, d.String())
		names = append(names, m[1])
		if m[1] == "sluice_request_duration_seconds" {
			names = append(names, m[1]+"_bucket", m[1]+"_sum", m[1]+"_count")
		}
	}
	return names
}

// dashboardQueries returns the queries of the Grafana dashboard's panels.
func dashboardQueries(t *testing.T) []string {
	data, err := os.ReadFile(filepath.Join("monitoring", "grafana-dashboard.json"))
	require.NoError(t, err)
	var dash struct {
		Title  string `json:"title"`
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	require.NoError(t, json.Unmarshal(data, &dash))
	require.NotEmpty(t, dash.Panels)
	var exprs []string
	for _, p := range dash.Panels {
		require.NotEmpty(t, p.Targets, "panel %q has queries", p.Title)
		for _, tg := range p.Targets {
			require.NotEmpty(t, tg.Expr, "panel %q", p.Title)
			exprs = append(exprs, tg.Expr)
		}
	}
	return exprs
}

// TestMonitoringNamesMetricsThatExist checks that every metric the alerting
// rules and the Grafana dashboard query is one the Collector reports, and
// that together they use the main ones.
func TestMonitoringNamesMetricsThatExist(t *testing.T) {
	have := collectorMetrics(t)
	queried := map[string]bool{}
	for _, file := range []string{"alerts.yaml", "grafana-dashboard.json"} {
		src, err := os.ReadFile(filepath.Join("monitoring", file))
		require.NoError(t, err)
		for _, name := range metricRE.FindAllString(string(src), -1) {
			if labelNames[name] {
				continue
			}
			assert.Contains(t, have, name, "%s names a metric the collector does not report", file)
			queried[name] = true
		}
	}
	for _, name := range []string{"sluice_requests_total", "sluice_rule_blocked_total",
		"sluice_rule_evaluated_total", "sluice_breaker_state", "sluice_store_healthy", "sluice_rule_unmatched",
		"sluice_rule_limit", "sluice_rule_usage", "sluice_request_duration_seconds_bucket", "sluice_rule_shadow_blocked_total",
		"sluice_rules_last_reload_successful"} {
		assert.True(t, queried[name], "%s is queried", name)
	}
}

// TestMonitoringPromtool checks the alerting rules (promtool check rules),
// their unit tests (promtool test rules, which fire each alert on sample
// series) and the dashboard's queries, as recording rules with Grafana's
// variables filled in. promtool is Debian's prometheus package; without
// it the test is skipped, unless SLUICE_REQUIRE_PROMTOOL=1 (set by CI).
func TestMonitoringPromtool(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("SLUICE_REQUIRE_PROMTOOL") == "1" {
			t.Fatal("promtool is not installed (apt-get install prometheus)")
		}
		t.Skip("promtool is not installed (apt-get install prometheus)")
	}
	run := func(dir string, args ...string) {
		t.Helper()
		cmd := exec.Command(promtool, args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "promtool %s:\n%s", strings.Join(args, " "), out)
	}
	run("monitoring", "check", "rules", "alerts.yaml")
	run("monitoring", "test", "rules", "alerts_test.yaml")

	vars := strings.NewReplacer("$__rate_interval", "5m", "$__range", "1h", "$job", ".*", "$instance", ".*")
	var b strings.Builder
	b.WriteString("groups:\n  - name: dashboard\n    rules:\n")
	for i, e := range dashboardQueries(t) {
		q, err := json.Marshal(vars.Replace(e))
		require.NoError(t, err)
		fmt.Fprintf(&b, "      - record: dashboard:query_%d\n        expr: %s\n", i, q)
	}
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "dashboard-queries.yaml"), []byte(b.String()), 0o600))
	run(dir, "check", "rules", "dashboard-queries.yaml")

	// A broken query fails the check: the check can fail.
	bad := "groups:\n  - name: bad\n    rules:\n      - record: x\n        expr: 'sum by (rule (sluice_rule_blocked_total)'\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "bad.yaml"), []byte(bad), 0o600))
	out, err := exec.Command(promtool, "check", "rules", filepath.Join(dir, "bad.yaml")).CombinedOutput()
	assert.Error(t, err, "%s", out)
	assert.True(t, slices.ContainsFunc(strings.Split(string(out), "\n"), func(l string) bool { return strings.Contains(l, "parse error") }), "%s", out)
}
