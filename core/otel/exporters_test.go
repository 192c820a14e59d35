package sluiceotel_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.yaml.in/yaml/v3"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/clock"
	sluiceotel "github.com/sluicekit/sluice/core/otel"
	sluiceprom "github.com/sluicekit/sluice/core/prometheus"
	"github.com/sluicekit/sluice/core/rulesfile"
)

// monitoring is the directory of the alerting rules and the Grafana
// dashboard, which both exporters' users load.
var monitoring = filepath.Join("..", "prometheus", "monitoring")

// busyGuard returns a Guard, on a fake clock, that has done something of
// everything the exporters report: a flow rule blocking half of its
// requests, a shadow rule, a concurrency rule with a slot held, an open
// breaker, a store that failed, a rule that matched nothing; and a rules
// file watcher whose last reload was refused.
func busyGuard(t *testing.T) (*core.Guard, *rulesfile.Watcher) {
	t.Helper()
	fc := clock.NewFake(time.Hour)
	g, err := core.New(core.WithClock(fc), quiet, core.WithStore("shared", failing{}), core.WithStoreBreaker(1, 0), core.WithRules(
		core.Rule{Name: "hello-rate", Resource: "GET /hello", Kind: core.KindFlow, Limit: 2, Window: time.Hour},
		core.Rule{Name: "hello-shadow", Resource: "GET /hello", Kind: core.KindFlow, Limit: 1, Window: time.Hour, Shadow: true},
		core.Rule{Name: "inflight", Resource: "GET /*", Kind: core.KindConcurrency, Limit: 5},
		core.Rule{Name: "pay-breaker", Resource: "POST /pay", Kind: core.KindBreaker, Strategy: "error-count", Threshold: 2, MinRequests: 1, OpenFor: time.Hour},
		core.Rule{Name: "shared-rate", Resource: "GET /s", Kind: core.KindFlow, Limit: 100, Store: "shared", OnFailure: core.FailOpen},
		core.Rule{Name: "typo", Resource: "GET /helo", Kind: core.KindFlow, Limit: 3},
	))
	require.NoError(t, err)
	t.Cleanup(func() { _ = g.Close() })
	fc.Advance(time.Millisecond)
	do := func(resource string, fail error) {
		e, err := g.Enter(context.Background(), resource)
		if err == nil {
			fc.Advance(3 * time.Millisecond)
			e.Exit(fail)
		}
	}
	for range 4 {
		do("GET /hello", nil)
	}
	for range 2 {
		do("POST /pay", io.ErrUnexpectedEOF)
	}
	do("GET /s", nil)
	held, err := g.Enter(context.Background(), "GET /items")
	require.NoError(t, err)
	t.Cleanup(func() { held.Exit(nil) })
	fc.Advance(6 * time.Minute) // past core.WithUnmatchedAfter's default

	// The watcher's statistics are its own: it watches a Guard of its own.
	wg, err := core.New(quiet)
	require.NoError(t, err)
	t.Cleanup(func() { _ = wg.Close() })
	path := filepath.Join(t.TempDir(), "rules.yaml")
	require.NoError(t, os.WriteFile(path, []byte("rules: []\n"), 0o600))
	w, err := rulesfile.NewWatcher(wg, path, rulesfile.WithLogger(slog.New(slog.DiscardHandler)))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, []byte("rules: [\n"), 0o600))
	require.Error(t, w.Reload())
	return g, w
}

// scrapeText GETs the text exposition from h, served over loopback.
func scrapeText(t *testing.T, h http.Handler) string {
	t.Helper()
	srv := httptest.NewServer(h)
	defer srv.Close()
	req, err := http.NewRequest(http.MethodGet, srv.URL, nil)
	require.NoError(t, err)
	req.Header.Set("Accept", "text/plain;version=0.0.4")
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
	body, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return string(body)
}

// promScrape returns what the Prometheus collector exposes of g and w.
func promScrape(t *testing.T, g *core.Guard, w *rulesfile.Watcher) string {
	t.Helper()
	h, err := sluiceprom.Handler(g, sluiceprom.WithWatcher(w))
	require.NoError(t, err)
	return scrapeText(t, h)
}

// otelScrape returns what OpenTelemetry's Prometheus exporter, with its
// default options, exposes of Register's instruments and the Producer's
// histograms for g and w.
func otelScrape(t *testing.T, g *core.Guard, w *rulesfile.Watcher) string {
	t.Helper()
	return scrapeText(t, otelHandler(t, g, sluiceotel.WithWatcher(w)))
}

// otelHandler returns the handler of OpenTelemetry's Prometheus exporter,
// with its default options, of Register's instruments (with opts) and the
// Producer's histograms for g, until t ends.
func otelHandler(t *testing.T, g *core.Guard, opts ...sluiceotel.Option) http.Handler {
	t.Helper()
	p, err := sluiceotel.NewProducer(g)
	require.NoError(t, err)
	reg := prometheus.NewRegistry()
	exp, err := otelprom.New(otelprom.WithRegisterer(reg), otelprom.WithProducer(p))
	require.NoError(t, err)
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(exp))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	_, err = sluiceotel.Register(g, append(opts, sluiceotel.WithMeterProvider(mp))...)
	require.NoError(t, err)
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
}

// exporterLabel reports whether a label is one OpenTelemetry's exporter
// adds to every series (the instrumentation scope), which sluice's own
// labels are compared without.
func exporterLabel(name string) bool { return strings.HasPrefix(name, "otel_scope_") }

// series returns the series of a text exposition, "name{label="value",...}"
// with its labels sorted and exporterLabel's left out, mapped to "type
// value", without the families that are not sluice's (target_info).
func series(t *testing.T, text string) map[string]string {
	t.Helper()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(strings.NewReader(text))
	require.NoError(t, err)
	out := map[string]string{}
	for name, f := range fams {
		if !strings.HasPrefix(name, "sluice_") {
			continue
		}
		for _, m := range f.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				if !exporterLabel(l.GetName()) {
					labels = append(labels, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
				}
			}
			slices.Sort(labels)
			key := name + "{" + strings.Join(labels, ",") + "}"
			var v string
			switch f.GetType() {
			case dto.MetricType_COUNTER:
				v = fmt.Sprint(m.GetCounter().GetValue())
			case dto.MetricType_GAUGE:
				v = fmt.Sprint(m.GetGauge().GetValue())
			case dto.MetricType_HISTOGRAM:
				h := m.GetHistogram()
				v = fmt.Sprint(h.GetSampleCount(), h.GetSampleSum(), len(h.GetBucket()))
			}
			require.NotContains(t, out, key)
			out[key] = f.GetType().String() + " " + v
		}
	}
	return out
}

// TestExportersAgree checks that the Prometheus collector and
// OpenTelemetry through its Prometheus exporter expose the same metric
// families, of the same types, with the same series (names, label names
// and label values) and the same values, for the same Guard activity; and
// that OpenTelemetry's scope has a version.
func TestExportersAgree(t *testing.T) {
	g, w := busyGuard(t)
	prom, otel := series(t, promScrape(t, g, w)), series(t, otelScrape(t, g, w))
	require.NotEmpty(t, prom)
	assert.Equal(t, prom, otel)
	names := func(m map[string]string) []string {
		var out []string
		for k := range m {
			out = append(out, k[:strings.IndexByte(k, '{')])
		}
		slices.Sort(out)
		return slices.Compact(out)
	}
	assert.Equal(t, names(prom), names(otel))
	for k := range maps.Keys(prom) {
		assert.NotContains(t, k, "_ratio", "a 0/1 gauge is not a ratio")
	}
	assert.Regexp(t, `otel_scope_version="[^"]+"`, otelScrape(t, g, w))
}

// TestMonitoringMatchesBothExporters runs, with promtool, every query of
// the Grafana dashboard and the expression of every alerting rule on the
// series each exporter exposes for busyGuard's activity: each query
// returns data, and each alert returns exactly the label sets it should,
// none of them empty. promtool is Debian's prometheus package; without it
// the test is skipped, unless SLUICE_REQUIRE_PROMTOOL=1 (set by CI).
func TestMonitoringMatchesBothExporters(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("SLUICE_REQUIRE_PROMTOOL") == "1" {
			t.Fatal("promtool is not installed (apt-get install prometheus)")
		}
		t.Skip("promtool is not installed (apt-get install prometheus)")
	}
	g, w := busyGuard(t)
	alerts := alertExprs(t)
	require.Len(t, alerts, 5)
	// What each alert's expression returns: its labels and value.
	wantAlerts := map[string][]sample{
		"SluiceRuleBlockingMuchOfItsTraffic": {{`{instance="a", job="api", sluice_rule_name="hello-rate"}`, 0.5}},
		"SluiceBreakerOpen":                  {{`{instance="a", job="api", sluice_rule_name="pay-breaker", sluice_rule_resource="POST /pay"}`, 1}},
		"SluiceStoreDown":                    {{`{instance="a", job="api", sluice_store_name="shared"}`, 0}},
		"SluiceRuleMatchesNothing":           {{`{instance="a", job="api", sluice_rule_name="typo"}`, 1}},
		"SluiceRulesReloadFailing":           {{`{instance="a", job="api"}`, 0}},
	}
	require.ElementsMatch(t, slices.Collect(maps.Keys(wantAlerts)), slices.Collect(maps.Keys(alerts)))
	for exporter, text := range map[string]string{"prometheus": promScrape(t, g, w), "otel": otelScrape(t, g, w)} {
		t.Run(exporter, func(t *testing.T) {
			var tests []exprTest
			for _, q := range dashboardQueries(t) {
				tests = append(tests, exprTest{Expr: "count(" + q + ") > bool 0", EvalTime: "30m", Exp: []sample{{"{}", 1}}})
			}
			for name, expr := range alerts {
				tests = append(tests, exprTest{Expr: expr, EvalTime: "30m", Exp: wantAlerts[name]})
			}
			runPromtool(t, promtool, text, tests)
		})
	}
	t.Run("percentiles", func(t *testing.T) { percentiles(t, promtool, g) })
	// The check can fail: a label the exporters do not have returns nothing.
	t.Run("old labels", func(t *testing.T) {
		text := promScrape(t, g, w)
		tests := []exprTest{{Expr: `count(sum by (rule) (sluice_rule_blocked_total{rule!=""})) > bool 0`, EvalTime: "30m", Exp: []sample{{"{}", 1}}}}
		out, err := promtoolTest(t, promtool, text, tests)
		assert.Error(t, err, "%s", out)
	})
}

// sample is an expected result of a promtool expression test.
type sample struct {
	Labels string  `json:"labels"`
	Value  float64 `json:"value"`
}

// exprTest is a promql_expr_test of promtool.
type exprTest struct {
	Expr     string   `json:"expr"`
	EvalTime string   `json:"eval_time"`
	Exp      []sample `json:"exp_samples"`
}

// runPromtool runs tests on the series of the exposition text, fails the
// test on any failure.
func runPromtool(t *testing.T, promtool, text string, tests []exprTest) {
	t.Helper()
	out, err := promtoolTest(t, promtool, text, tests)
	require.NoError(t, err, "%s", out)
}

// promtoolTest runs tests on the series of the exposition text (classic
// histograms only) and returns promtool's output.
func promtoolTest(t *testing.T, promtool, text string, tests []exprTest) ([]byte, error) {
	t.Helper()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(strings.NewReader(text))
	require.NoError(t, err)
	return promtoolRun(t, promtool, inputSeries(fams, classicBuckets), tests)
}

// input is an input series of a promtool unit test.
type input struct {
	Series string `json:"series"`
	Values string `json:"values"`
}

// histogramForm says which buckets of histograms inputSeries writes.
type histogramForm int

const (
	classicBuckets histogramForm = 1 << iota // _bucket{le}, _sum, _count
	nativeBuckets                            // one series of native histogram samples
)

// inputSeries returns the series of fams as a scrape gives them, every one
// with job="api" and instance="a" as a scrape adds them, repeated each
// minute for an hour: a counter grows by 60 times its value a minute (its
// rate is its value), a gauge keeps its value, a native histogram grows by
// itself a minute.
func inputSeries(fams map[string]*dto.MetricFamily, form histogramForm) []input {
	var in []input
	series := func(name string, labels []*dto.LabelPair, extra string) string {
		ls := []string{`job="api"`, `instance="a"`}
		for _, l := range labels {
			ls = append(ls, l.GetName()+"="+strconv.Quote(l.GetValue()))
		}
		if extra != "" {
			ls = append(ls, extra)
		}
		return name + "{" + strings.Join(ls, ",") + "}"
	}
	add := func(name string, labels []*dto.LabelPair, extra string, v float64, counter bool) {
		values := fmt.Sprintf("%gx60", v)
		if counter {
			values = fmt.Sprintf("0+%gx60", 60*v)
		}
		in = append(in, input{series(name, labels, extra), values})
	}
	for name, f := range fams {
		for _, m := range f.GetMetric() {
			switch f.GetType() {
			case dto.MetricType_COUNTER:
				add(name, m.GetLabel(), "", m.GetCounter().GetValue(), true)
			case dto.MetricType_GAUGE:
				add(name, m.GetLabel(), "", m.GetGauge().GetValue(), false)
			case dto.MetricType_HISTOGRAM:
				h := m.GetHistogram()
				if form&classicBuckets != 0 {
					for _, b := range h.GetBucket() {
						add(name+"_bucket", m.GetLabel(), "le="+strconv.Quote(fmt.Sprint(b.GetUpperBound())), float64(b.GetCumulativeCount()), true)
					}
					add(name+"_bucket", m.GetLabel(), `le="+Inf"`, float64(h.GetSampleCount()), true)
					add(name+"_sum", m.GetLabel(), "", h.GetSampleSum(), true)
					add(name+"_count", m.GetLabel(), "", float64(h.GetSampleCount()), true)
				}
				if form&nativeBuckets != 0 && h.Schema != nil {
					n := nativeNotation(h)
					in = append(in, input{series(name, m.GetLabel(), ""), n + "+" + n + "x60"})
				}
			}
		}
	}
	return in
}

// nativeNotation returns the native buckets of h in promtool's notation
// for a native histogram sample.
func nativeNotation(h *dto.Histogram) string {
	var b strings.Builder
	fmt.Fprintf(&b, "{{schema:%d count:%d sum:%g z_bucket:%d z_bucket_w:%g", h.GetSchema(), h.GetSampleCount(), h.GetSampleSum(), h.GetZeroCount(), h.GetZeroThreshold())
	var counts []string
	var count int64
	deltas := h.GetPositiveDelta()
	for i, sp := range h.GetPositiveSpan() {
		if i == 0 {
			fmt.Fprintf(&b, " offset:%d", sp.GetOffset())
		} else {
			for range sp.GetOffset() {
				counts = append(counts, "0") // a gap between spans
			}
		}
		for range sp.GetLength() {
			count += deltas[0] // deltas are between populated buckets
			deltas = deltas[1:]
			counts = append(counts, strconv.FormatInt(count, 10))
		}
	}
	if len(counts) > 0 {
		fmt.Fprintf(&b, " buckets:[%s]", strings.Join(counts, " "))
	}
	b.WriteString("}}")
	return b.String()
}

// promtoolRun writes a promtool unit test of tests on the input series in,
// runs `promtool test rules` and returns its output.
func promtoolRun(t *testing.T, promtool string, in []input, tests []exprTest) ([]byte, error) {
	t.Helper()
	file := map[string]any{
		"evaluation_interval": "1m",
		"tests": []any{map[string]any{
			"interval":         "1m",
			"input_series":     in,
			"promql_expr_test": tests,
		}},
	}
	data, err := json.Marshal(file) // JSON is YAML
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "test.yaml")
	require.NoError(t, os.WriteFile(path, data, 0o600))
	return exec.Command(promtool, "test", "rules", path).CombinedOutput()
}

// alertExprs returns the expression of each alerting rule, by alert name.
func alertExprs(t *testing.T) map[string]string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(monitoring, "alerts.yaml"))
	require.NoError(t, err)
	var file struct {
		Groups []struct {
			Rules []struct {
				Alert string `yaml:"alert"`
				Expr  string `yaml:"expr"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	require.NoError(t, yaml.Unmarshal(data, &file))
	out := map[string]string{}
	for _, gr := range file.Groups {
		for _, r := range gr.Rules {
			out[r.Alert] = r.Expr
		}
	}
	return out
}

// labelValuesRE matches Grafana's label_values(metric, label) variable
// query.
var labelValuesRE = regexp.MustCompile(`^label_values\((.+), *(\w+)\)$`)

// dashboardQueries returns the PromQL queries of the Grafana dashboard: its
// panels' and, as `count by (label) (metric)`, its variables', with
// Grafana's variables filled in.
func dashboardQueries(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(monitoring, "grafana-dashboard.json"))
	require.NoError(t, err)
	var dash struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
		Templating struct {
			List []struct {
				Query any `json:"query"`
			} `json:"list"`
		} `json:"templating"`
	}
	require.NoError(t, json.Unmarshal(data, &dash))
	vars := strings.NewReplacer("$__rate_interval", "5m", "$__range", "1h", "$job", ".*", "$instance", ".*")
	var out []string
	for _, v := range dash.Templating.List {
		q, ok := v.Query.(map[string]any)
		if !ok {
			continue
		}
		m := labelValuesRE.FindStringSubmatch(fmt.Sprint(q["query"]))
		require.NotNil(t, m, "variable query %v", q["query"])
		out = append(out, vars.Replace("count by ("+m[2]+") ("+m[1]+")"))
	}
	require.Len(t, out, 2, "the job and instance variables")
	for _, p := range dash.Panels {
		for _, tg := range p.Targets {
			out = append(out, vars.Replace(tg.Expr))
		}
	}
	return out
}

// percentiles checks that each percentile query of the dashboard returns
// one sample per resource whether Prometheus stores the Prometheus
// collector's classic buckets, its native buckets, or both (native
// histograms scraped with classic ones kept). promtool 2.42, Debian 12's,
// reads no native histogram in a unit test: there only the classic case
// runs, unless SLUICE_REQUIRE_NATIVE_HISTOGRAMS=1 (.ci/run builds a newer
// promtool) makes that a failure.
func percentiles(t *testing.T, promtool string, g *core.Guard) {
	c, err := sluiceprom.NewCollector(g)
	require.NoError(t, err)
	reg := prometheus.NewPedanticRegistry()
	require.NoError(t, reg.Register(c))
	gathered, err := reg.Gather()
	require.NoError(t, err)
	fams := map[string]*dto.MetricFamily{}
	for _, f := range gathered {
		fams[f.GetName()] = f
	}
	resources := len(fams["sluice_request_duration_seconds"].GetMetric())
	require.Equal(t, 4, resources)
	var queries []string
	for _, q := range dashboardQueries(t) {
		if strings.Contains(q, "histogram_quantile") {
			queries = append(queries, q)
		}
	}
	require.Len(t, queries, 3, "p50, p90, p99")
	var tests []exprTest
	for _, q := range queries {
		tests = append(tests, exprTest{Expr: "count(" + q + ")", EvalTime: "30m", Exp: []sample{{"{}", float64(resources)}}})
	}
	forms := map[string]histogramForm{"classic": classicBuckets}
	probe := []input{{`x{}`, "{{schema:0 count:1 sum:1 buckets:[1]}}x1"}}
	if out, err := promtoolRun(t, promtool, probe, []exprTest{{Expr: "count(x)", EvalTime: "1m", Exp: []sample{{"{}", 1}}}}); err == nil {
		forms["native"], forms["both"] = nativeBuckets, classicBuckets|nativeBuckets
	} else if os.Getenv("SLUICE_REQUIRE_NATIVE_HISTOGRAMS") == "1" {
		t.Fatalf("SLUICE_REQUIRE_NATIVE_HISTOGRAMS=1, but %s reads no native histogram in a test:\n%s", promtool, out)
	} else {
		t.Logf("this promtool reads no native histogram in a test; the classic buckets only:\n%s", out)
	}
	for name, form := range forms {
		t.Run(name, func(t *testing.T) {
			out, err := promtoolRun(t, promtool, inputSeries(fams, form), tests)
			require.NoError(t, err, "%s", out)
		})
	}
}
