package sluiceprom_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/clock"
	sluiceprom "github.com/sluicekit/sluice/core/prometheus"
)

// scrape GETs url and parses the text exposition.
func scrape(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	res, err := http.Get(url)
	require.NoError(t, err)
	defer res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(res.Body)
	require.NoError(t, err)
	return fams
}

// value returns the value of the series of family name with labels, and
// whether it is there.
func value(fams map[string]*dto.MetricFamily, name string, labels ...string) (float64, bool) {
	f := fams[name]
	if f == nil {
		return 0, false
	}
next:
	for _, m := range f.GetMetric() {
		got := map[string]string{}
		for _, lp := range m.GetLabel() {
			got[lp.GetName()] = lp.GetValue()
		}
		for i := 0; i+1 < len(labels); i += 2 {
			if got[labels[i]] != labels[i+1] {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.GetCounter().GetValue(), true
		case m.Gauge != nil:
			return m.GetGauge().GetValue(), true
		}
	}
	return 0, false
}

func must(t *testing.T, fams map[string]*dto.MetricFamily, want float64, name string, labels ...string) {
	t.Helper()
	v, ok := value(fams, name, labels...)
	require.True(t, ok, "no series %s%v", name, labels)
	assert.Equal(t, want, v, "%s%v", name, labels)
}

func TestScrape(t *testing.T) {
	fc := clock.NewFake(time.Hour)
	g, err := core.New(core.WithClock(fc), core.WithLogger(slog.New(slog.DiscardHandler)), core.WithRules(
		core.Rule{Name: "hello-rate", Resource: "GET /hello", Kind: core.KindFlow, Limit: 3},
		core.Rule{Name: "inflight", Resource: "GET /*", Kind: core.KindConcurrency, Limit: 2},
		core.Rule{Name: "fail-breaker", Resource: "GET /fail", Kind: core.KindBreaker, Strategy: "error-count", Threshold: 2, MinRequests: 1, OpenFor: 5 * time.Second},
		core.Rule{Name: "odd \"name\" \\ with ünïcode", Resource: "GET /odd", Kind: core.KindFlow, Limit: 0},
	))
	require.NoError(t, err)
	defer g.Close()
	reg := prometheus.NewPedanticRegistry()
	c, err := sluiceprom.NewCollector(g)
	require.NoError(t, err)
	require.NoError(t, reg.Register(c))
	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	defer srv.Close()

	ctx := context.Background()
	for range 5 { // 3 pass, 2 blocked by the flow rule
		if e, err := g.Enter(ctx, "GET /hello"); err == nil {
			fc.Advance(100 * time.Millisecond)
			e.Exit(nil)
		}
	}
	for range 3 { // 2 fail, then the breaker is open
		if e, err := g.Enter(ctx, "GET /fail"); err == nil {
			e.Exit(errors.New("500"))
		}
	}
	_, err = g.Enter(ctx, "GET /odd")
	require.Error(t, err)
	held, err := g.Enter(ctx, "GET /items/{id}")
	require.NoError(t, err)

	fams := scrape(t, srv.URL)
	must(t, fams, 3, "sluice_requests_passed_total", "resource", "GET /hello")
	must(t, fams, 2, "sluice_requests_blocked_total", "resource", "GET /hello", "reason", "flow")
	must(t, fams, 0, "sluice_requests_blocked_total", "resource", "GET /hello", "reason", "breaker")
	must(t, fams, 3, "sluice_requests_completed_total", "resource", "GET /hello")
	must(t, fams, 0.3, "sluice_response_time_seconds_total", "resource", "GET /hello")
	must(t, fams, 2, "sluice_requests_errors_total", "resource", "GET /fail")
	must(t, fams, 1, "sluice_requests_blocked_total", "resource", "GET /fail", "reason", "breaker")
	must(t, fams, 1, "sluice_requests_in_flight", "resource", "GET /items/{id}")
	must(t, fams, 2, "sluice_rule_blocked_total", "rule", "hello-rate", "kind", "flow", "resource", "GET /hello")
	must(t, fams, 1, "sluice_rule_in_flight", "rule", "inflight")
	must(t, fams, 1, "sluice_breaker_state", "rule", "fail-breaker", "state", "open")
	must(t, fams, 0, "sluice_breaker_state", "rule", "fail-breaker", "state", "closed")
	must(t, fams, 0, "sluice_breaker_state", "rule", "fail-breaker", "state", "half-open")
	must(t, fams, 1, "sluice_breaker_trips_total", "rule", "fail-breaker")
	must(t, fams, 1, "sluice_rule_blocked_total", "rule", "odd \"name\" \\ with ünïcode")
	must(t, fams, 0, "sluice_events_dropped_total")
	_, ok := value(fams, "sluice_rule_in_flight", "rule", "hello-rate")
	assert.False(t, ok, "only concurrency rules have in-flight series")

	// Counters move on; the open breaker closes after a good probe.
	held.Exit(nil)
	fc.Advance(5 * time.Second)
	e, err := g.Enter(ctx, "GET /fail")
	require.NoError(t, err)
	e.Exit(nil)
	fams = scrape(t, srv.URL)
	must(t, fams, 1, "sluice_breaker_state", "rule", "fail-breaker", "state", "closed")
	must(t, fams, 0, "sluice_rule_in_flight", "rule", "inflight")
	must(t, fams, 3, "sluice_requests_completed_total", "resource", "GET /fail")

	problems, err := testutil.CollectAndLint(c)
	require.NoError(t, err)
	assert.Empty(t, problems)
}

func TestStoresAndOptions(t *testing.T) {
	g, err := core.New(core.WithLogger(slog.New(slog.DiscardHandler)))
	require.NoError(t, err)
	defer g.Close()
	h, err := sluiceprom.Handler(g, sluiceprom.WithNamespace("edge"), sluiceprom.WithConstLabels(prometheus.Labels{"instance_name": "a"}))
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	defer srv.Close()
	fams := scrape(t, srv.URL)
	must(t, fams, 0, "edge_events_dropped_total", "instance_name", "a")

	for _, tc := range []struct {
		opt  sluiceprom.Option
		want string
	}{
		{sluiceprom.WithNamespace("1bad"), `WithNamespace("1bad"): must match`},
		{sluiceprom.WithNamespace("a-b"), `WithNamespace("a-b")`},
		{sluiceprom.WithConstLabels(prometheus.Labels{"rule": "x"}), `"rule" is a label of the collector's own metrics`},
		{sluiceprom.WithConstLabels(prometheus.Labels{"__x": "x"}), `"__x" is not a valid label name`},
		{sluiceprom.WithConstLabels(prometheus.Labels{"a b": "x"}), `"a b" is not a valid label name`},
	} {
		_, err := sluiceprom.NewCollector(g, tc.opt)
		assert.ErrorContains(t, err, tc.want)
	}
	_, err = sluiceprom.NewCollector(nil)
	assert.ErrorContains(t, err, "guard is nil")
	_, err = sluiceprom.Handler(g, nil)
	assert.ErrorContains(t, err, "nil option")
}

func BenchmarkCollect(b *testing.B) {
	var rules []core.Rule
	for i := range 10 {
		rules = append(rules, core.Rule{Resource: "GET /r" + strings.Repeat("x", i) + "/*", Kind: core.KindFlow, Limit: 1000})
	}
	g, err := core.New(core.WithRules(rules...), core.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		b.Fatal(err)
	}
	defer g.Close()
	for i := range 100 {
		if e, err := g.Enter(context.Background(), "GET /r/"+strings.Repeat("y", i)); err == nil {
			e.Exit(nil)
		}
	}
	c, err := sluiceprom.NewCollector(g)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		ch := make(chan prometheus.Metric, 2048)
		c.Collect(ch)
	}
}
