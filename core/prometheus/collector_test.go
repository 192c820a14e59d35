package sluiceprom_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
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

var quiet = core.WithLogger(slog.New(slog.DiscardHandler))

// serve registers cs in a new pedantic registry and serves it over a
// loopback listener until the test ends; it returns the URL to scrape.
func serve(t *testing.T, cs ...prometheus.Collector) string {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	for _, c := range cs {
		require.NoError(t, reg.Register(c))
	}
	// The default HTTPErrorOnError: any bad series fails the scrape.
	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	t.Cleanup(srv.Close)
	return srv.URL
}

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

// value returns the value of the series of family name whose labels
// include the name-value pairs labels, and whether there is one.
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
			if v, ok := got[labels[i]]; !ok || v != labels[i+1] {
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

// must asserts that the series of family name with labels has the value
// want.
func must(t *testing.T, fams map[string]*dto.MetricFamily, want float64, name string, labels ...string) {
	t.Helper()
	v, ok := value(fams, name, labels...)
	if assert.True(t, ok, "no series %s%q", name, labels) {
		assert.Equal(t, want, v, "%s%q", name, labels)
	}
}

// labelValues returns the values of label in the series of family name.
func labelValues(fams map[string]*dto.MetricFamily, name, label string) []string {
	var out []string
	for _, m := range fams[name].GetMetric() {
		for _, lp := range m.GetLabel() {
			if lp.GetName() == label {
				out = append(out, lp.GetValue())
			}
		}
	}
	slices.Sort(out)
	return out
}

// TestScrape drives a Guard with flow, concurrency and breaker rules on a
// fake clock and reads the exact counts back from a real scrape.
func TestScrape(t *testing.T) {
	fc := clock.NewFake(time.Hour)
	g, err := core.New(core.WithClock(fc), quiet, core.WithRules(
		core.Rule{Name: "hello-rate", Resource: "GET /hello", Kind: core.KindFlow, Limit: 3},
		core.Rule{Name: "inflight", Resource: "GET /*", Kind: core.KindConcurrency, Limit: 2},
		core.Rule{Name: "fail-breaker", Resource: "GET /fail", Kind: core.KindBreaker, Strategy: "error-count", Threshold: 2, MinRequests: 1, OpenFor: 5 * time.Second},
	))
	require.NoError(t, err)
	defer g.Close()
	c, err := sluiceprom.NewCollector(g)
	require.NoError(t, err)
	url := serve(t, c)

	// Before any request: the rules' series are there, at zero; no
	// resource has been seen yet.
	fams := scrape(t, url)
	must(t, fams, 0, "sluice_rule_blocked_total", "sluice_rule_name", "hello-rate", "sluice_rule_kind", "flow", "sluice_rule_resource", "GET /hello")
	must(t, fams, 1, "sluice_breaker_state", "sluice_rule_name", "fail-breaker", "sluice_rule_resource", "GET /fail", "sluice_breaker_state", "closed")
	must(t, fams, 0, "sluice_breaker_state", "sluice_rule_name", "fail-breaker", "sluice_breaker_state", "open")
	assert.Nil(t, fams["sluice_requests_total"])

	ctx := context.Background()
	for range 5 { // 3 pass and take 100ms each, 2 are blocked by the flow rule
		if e, err := g.Enter(ctx, "GET /hello"); err == nil {
			fc.Advance(100 * time.Millisecond)
			e.Exit(nil)
		}
	}
	for range 3 { // 2 fail and open the breaker, which blocks the third
		if e, err := g.Enter(ctx, "GET /fail"); err == nil {
			e.Exit(errors.New("500"))
		}
	}
	// Two held: the concurrency rule blocks the third.
	a, err := g.Enter(ctx, "GET /items/{id}")
	require.NoError(t, err)
	b, err := g.Enter(ctx, "GET /items/{id}")
	require.NoError(t, err)
	_, err = g.Enter(ctx, "GET /items/{id}")
	var be *core.BlockedError
	require.ErrorAs(t, err, &be)
	require.Equal(t, "inflight", be.Rule)

	fams = scrape(t, url)
	// Resources.
	must(t, fams, 3, "sluice_requests_total", "sluice_resource", "GET /hello", "sluice_result", "passed")
	must(t, fams, 2, "sluice_requests_total", "sluice_resource", "GET /hello", "sluice_result", "flow")
	must(t, fams, 3, "sluice_completed_requests_total", "sluice_resource", "GET /hello")
	must(t, fams, 0, "sluice_failed_requests_total", "sluice_resource", "GET /hello")
	must(t, fams, 0.3, "sluice_response_time_seconds_total", "sluice_resource", "GET /hello")
	must(t, fams, 0, "sluice_active_requests", "sluice_resource", "GET /hello")
	must(t, fams, 2, "sluice_requests_total", "sluice_resource", "GET /fail", "sluice_result", "passed")
	must(t, fams, 2, "sluice_failed_requests_total", "sluice_resource", "GET /fail")
	must(t, fams, 1, "sluice_requests_total", "sluice_resource", "GET /fail", "sluice_result", "breaker")
	must(t, fams, 2, "sluice_requests_total", "sluice_resource", "GET /items/{id}", "sluice_result", "passed")
	must(t, fams, 1, "sluice_requests_total", "sluice_resource", "GET /items/{id}", "sluice_result", "concurrency")
	must(t, fams, 2, "sluice_active_requests", "sluice_resource", "GET /items/{id}")
	// Every reason has a series for every resource, zero or not.
	for _, res := range []string{"GET /hello", "GET /fail", "GET /items/{id}"} {
		for _, why := range core.BlockReasons() {
			_, ok := value(fams, "sluice_requests_total", "sluice_resource", res, "sluice_result", why)
			assert.True(t, ok, "%s %s", res, why)
		}
	}
	must(t, fams, 0, "sluice_requests_total", "sluice_resource", "GET /hello", "sluice_result", "breaker")
	assert.Len(t, fams["sluice_requests_total"].GetMetric(), 3*(1+len(core.BlockReasons())))
	// Rules.
	must(t, fams, 2, "sluice_rule_blocked_total", "sluice_rule_name", "hello-rate", "sluice_rule_kind", "flow", "sluice_rule_resource", "GET /hello")
	must(t, fams, 1, "sluice_rule_blocked_total", "sluice_rule_name", "inflight", "sluice_rule_kind", "concurrency", "sluice_rule_resource", "GET /*")
	must(t, fams, 1, "sluice_rule_blocked_total", "sluice_rule_name", "fail-breaker", "sluice_rule_kind", "breaker", "sluice_rule_resource", "GET /fail")
	must(t, fams, 2, "sluice_rule_active_requests", "sluice_rule_name", "inflight", "sluice_rule_resource", "GET /*")
	must(t, fams, 5, "sluice_rule_evaluated_total", "sluice_rule_name", "hello-rate", "sluice_rule_kind", "flow", "sluice_rule_resource", "GET /hello")
	must(t, fams, 5+3+3, "sluice_rule_evaluated_total", "sluice_rule_name", "inflight", "sluice_rule_kind", "concurrency", "sluice_rule_resource", "GET /*")
	must(t, fams, 3, "sluice_rule_evaluated_total", "sluice_rule_name", "fail-breaker", "sluice_rule_kind", "breaker", "sluice_rule_resource", "GET /fail")
	must(t, fams, 3, "sluice_rule_resources", "sluice_rule_name", "inflight", "sluice_rule_kind", "concurrency", "sluice_rule_resource", "GET /*")
	must(t, fams, 1, "sluice_rule_resources", "sluice_rule_name", "hello-rate")
	must(t, fams, 0, "sluice_rule_unmatched", "sluice_rule_name", "hello-rate")
	assert.Equal(t, []string{"inflight"}, labelValues(fams, "sluice_rule_active_requests", "sluice_rule_name"), "only concurrency rules have in-flight series")
	must(t, fams, 1, "sluice_breaker_state", "sluice_rule_name", "fail-breaker", "sluice_rule_resource", "GET /fail", "sluice_breaker_state", "open")
	must(t, fams, 0, "sluice_breaker_state", "sluice_rule_name", "fail-breaker", "sluice_breaker_state", "closed")
	must(t, fams, 0, "sluice_breaker_state", "sluice_rule_name", "fail-breaker", "sluice_breaker_state", "half-open")
	must(t, fams, 1, "sluice_breaker_trips_total", "sluice_rule_name", "fail-breaker", "sluice_rule_resource", "GET /fail")
	assert.Nil(t, fams["sluice_rule_fallbacks_total"], "no rule has a store")
	assert.Nil(t, fams["sluice_store_healthy"], "the Guard has no store")
	must(t, fams, 0, "sluice_events_dropped_total")
	// Types.
	for name, typ := range map[string]dto.MetricType{
		"sluice_requests_total":              dto.MetricType_COUNTER,
		"sluice_completed_requests_total":    dto.MetricType_COUNTER,
		"sluice_failed_requests_total":       dto.MetricType_COUNTER,
		"sluice_response_time_seconds_total": dto.MetricType_COUNTER,
		"sluice_active_requests":             dto.MetricType_GAUGE,
		"sluice_rule_blocked_total":          dto.MetricType_COUNTER,
		"sluice_rule_active_requests":        dto.MetricType_GAUGE,
		"sluice_rule_evaluated_total":        dto.MetricType_COUNTER,
		"sluice_rule_resources":              dto.MetricType_GAUGE,
		"sluice_rule_unmatched":              dto.MetricType_GAUGE,
		"sluice_breaker_state":               dto.MetricType_GAUGE,
		"sluice_breaker_trips_total":         dto.MetricType_COUNTER,
		"sluice_events_dropped_total":        dto.MetricType_COUNTER,
	} {
		if assert.Contains(t, fams, name) {
			assert.Equal(t, typ, fams[name].GetType(), name)
		}
	}

	// The held requests exit; after OpenFor a probe makes the breaker
	// half-open while it runs, and closes it when it succeeds.
	a.Exit(nil)
	b.Exit(nil)
	fc.Advance(5 * time.Second)
	probe, err := g.Enter(ctx, "GET /fail")
	require.NoError(t, err)
	fams = scrape(t, url)
	must(t, fams, 1, "sluice_breaker_state", "sluice_rule_name", "fail-breaker", "sluice_breaker_state", "half-open")
	must(t, fams, 0, "sluice_breaker_state", "sluice_rule_name", "fail-breaker", "sluice_breaker_state", "open")
	must(t, fams, 1, "sluice_rule_active_requests", "sluice_rule_name", "inflight")
	probe.Exit(nil)
	fams = scrape(t, url)
	must(t, fams, 1, "sluice_breaker_state", "sluice_rule_name", "fail-breaker", "sluice_breaker_state", "closed")
	must(t, fams, 0, "sluice_breaker_state", "sluice_rule_name", "fail-breaker", "sluice_breaker_state", "half-open")
	must(t, fams, 1, "sluice_breaker_trips_total", "sluice_rule_name", "fail-breaker")
	must(t, fams, 0, "sluice_rule_active_requests", "sluice_rule_name", "inflight")
	must(t, fams, 0, "sluice_active_requests", "sluice_resource", "GET /items/{id}")
	must(t, fams, 3, "sluice_completed_requests_total", "sluice_resource", "GET /fail")
	must(t, fams, 2, "sluice_completed_requests_total", "sluice_resource", "GET /items/{id}")

	// The counters of a rule survive a reload that keeps its name, kind
	// and resource; a removed rule's series go.
	require.NoError(t, g.SetRules([]core.Rule{{Name: "hello-rate", Resource: "GET /hello", Kind: core.KindFlow, Limit: 3}}))
	fams = scrape(t, url)
	must(t, fams, 2, "sluice_rule_blocked_total", "sluice_rule_name", "hello-rate")
	assert.Equal(t, []string{"hello-rate"}, labelValues(fams, "sluice_rule_blocked_total", "sluice_rule_name"))
	assert.Nil(t, fams["sluice_breaker_state"])

	// A rule that matches no request is flagged after 5 minutes (the
	// default of core.WithUnmatchedAfter).
	require.NoError(t, g.SetRules([]core.Rule{{Name: "typo", Resource: "GET /helo", Kind: core.KindFlow, Limit: 3}}))
	must(t, scrape(t, url), 0, "sluice_rule_unmatched", "sluice_rule_name", "typo")
	fc.Advance(5 * time.Minute)
	fams = scrape(t, url)
	must(t, fams, 1, "sluice_rule_unmatched", "sluice_rule_name", "typo", "sluice_rule_kind", "flow", "sluice_rule_resource", "GET /helo")
	must(t, fams, 0, "sluice_rule_resources", "sluice_rule_name", "typo")
	must(t, fams, 0, "sluice_rule_evaluated_total", "sluice_rule_name", "typo")

	problems, err := testutil.CollectAndLint(c)
	require.NoError(t, err)
	assert.Empty(t, problems)
}

// TestOddNames checks that rule and resource names pass through as label
// values whatever their characters.
func TestOddNames(t *testing.T) {
	const (
		rule     = "Rule-9_a.b:c/{d}*$#(e)" // every character a rule name may hold
		resource = "GET /line1\nline2 \"q\" \\n ✓\t"
		bad      = "GET /bad\xff\xfebyte"
	)
	// A rule name holds only letters, digits and core.NameChars; a resource
	// name, which any caller of Enter gives, holds anything.
	_, err := core.New(quiet, core.WithRules(core.Rule{Name: "a\nb", Resource: "x", Kind: core.KindFlow, Limit: 1}))
	require.ErrorContains(t, err, "must contain only ASCII letters, digits and")

	g, err := core.New(quiet, core.WithRules(core.Rule{Name: rule, Resource: "GET /odd", Kind: core.KindFlow, Limit: 0}))
	require.NoError(t, err)
	defer g.Close()
	c, err := sluiceprom.NewCollector(g)
	require.NoError(t, err)
	url := serve(t, c)

	ctx := context.Background()
	_, err = g.Enter(ctx, "GET /odd")
	require.Error(t, err)
	for _, r := range []string{resource, bad} {
		e, err := g.Enter(ctx, r)
		require.NoError(t, err)
		e.Exit(nil)
	}

	fams := scrape(t, url) // a 200: no series failed
	must(t, fams, 1, "sluice_rule_blocked_total", "sluice_rule_name", rule, "sluice_rule_resource", "GET /odd")
	must(t, fams, 1, "sluice_requests_total", "sluice_resource", "GET /odd", "sluice_result", "flow")
	must(t, fams, 1, "sluice_requests_total", "sluice_resource", resource, "sluice_result", "passed")
	// Invalid UTF-8, which Prometheus refuses, becomes U+FFFD.
	must(t, fams, 1, "sluice_requests_total", "sluice_resource", "GET /bad\uFFFDbyte", "sluice_result", "passed")
	assert.Equal(t, []string{"GET /bad\uFFFDbyte", resource, "GET /odd"}, labelValues(fams, "sluice_active_requests", "sluice_resource"))
}

// TestConcurrentScrapes scrapes while requests flow, under -race: counters
// never go down, and at the end they add up to what was sent.
func TestConcurrentScrapes(t *testing.T) {
	g, err := core.New(quiet, core.WithRules(
		core.Rule{Name: "rate", Resource: "GET /a", Kind: core.KindFlow, Limit: 50},
		core.Rule{Name: "conc", Resource: "*", Kind: core.KindConcurrency, Limit: 3},
	))
	require.NoError(t, err)
	defer g.Close()
	h, err := sluiceprom.Handler(g)
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	defer srv.Close()

	// Traffic until 20 scrapes have been made during it.
	const workers, scrapes = 4, 20
	var sent atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				res := "GET /a"
				if i%2 == 1 {
					res = fmt.Sprintf("GET /b%d", w)
				}
				sent.Add(1)
				if e, err := g.Enter(context.Background(), res); err == nil {
					e.Exit(nil)
				}
			}
		})
	}
	total := func(fams map[string]*dto.MetricFamily) float64 {
		var n float64
		for _, m := range fams["sluice_requests_total"].GetMetric() {
			n += m.GetCounter().GetValue()
		}
		return n
	}
	last := -1.0
	for range scrapes {
		// Requests were sent since the last scrape: traffic runs between
		// and around every scrape, however the goroutines are scheduled.
		since := sent.Load()
		require.Eventually(t, func() bool { return sent.Load() > since }, time.Minute, time.Millisecond)
		n := total(scrape(t, srv.URL))
		assert.GreaterOrEqual(t, n, last)
		last = n
	}
	close(stop)
	wg.Wait()
	fams := scrape(t, srv.URL)
	assert.Equal(t, float64(sent.Load()), total(fams))
	for name, labels := range map[string][]string{
		"sluice_requests_total":           {"sluice_resource", "GET /a", "sluice_result", "passed"},
		"sluice_completed_requests_total": {"sluice_resource", "GET /a"},
	} {
		v, _ := value(fams, name, labels...)
		assert.Positive(t, v, name)
	}
	must(t, fams, 0, "sluice_rule_active_requests", "sluice_rule_name", "conc")
	t.Logf("%d requests during %d scrapes", sent.Load(), scrapes)
}

// TestOptions checks the options and that their errors name the option and
// the value.
func TestOptions(t *testing.T) {
	g, err := core.New(quiet)
	require.NoError(t, err)
	defer g.Close()

	h, err := sluiceprom.Handler(g, sluiceprom.WithNamespace("edge"),
		sluiceprom.WithConstLabels(prometheus.Labels{"instance_name": "a", "zone": "x"}),
		sluiceprom.WithConstLabels(prometheus.Labels{"zone": "eu-1"}))
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	defer srv.Close()
	fams := scrape(t, srv.URL)
	must(t, fams, 0, "edge_events_dropped_total", "instance_name", "a", "zone", "eu-1")
	assert.Nil(t, fams["sluice_events_dropped_total"])

	for _, tc := range []struct {
		opt  sluiceprom.Option
		want string
	}{
		{sluiceprom.WithNamespace(""), `WithNamespace(""): must be letters, digits and '_'`},
		{sluiceprom.WithNamespace("1bad"), `WithNamespace("1bad"): must be`},
		{sluiceprom.WithNamespace("a-b"), `WithNamespace("a-b"): must be`},
		{sluiceprom.WithNamespace("a:b"), `WithNamespace("a:b"): must be`},
		{sluiceprom.WithNamespace("__x"), `WithNamespace("__x"): must be`},
		{sluiceprom.WithConstLabels(prometheus.Labels{"sluice_rule_name": "x"}), `WithConstLabels: "sluice_rule_name" is a label of the collector's own metrics`},
		{sluiceprom.WithConstLabels(prometheus.Labels{"__x": "x"}), `WithConstLabels: "__x" is not a valid label name`},
		{sluiceprom.WithConstLabels(prometheus.Labels{"a b": "x"}), `WithConstLabels: "a b" is not a valid label name`},
		{sluiceprom.WithConstLabels(prometheus.Labels{"ok": "\xff"}), `WithConstLabels: the value of "ok" is not valid UTF-8: "\xff"`},
		{nil, "NewCollector: nil option"},
	} {
		_, err := sluiceprom.NewCollector(g, tc.opt)
		assert.ErrorContains(t, err, tc.want)
		assert.ErrorContains(t, err, "sluiceprom: ")
		_, err = sluiceprom.Handler(g, tc.opt)
		assert.ErrorContains(t, err, tc.want)
	}
	_, err = sluiceprom.NewCollector(nil)
	assert.ErrorContains(t, err, "guard is nil")
	_, err = sluiceprom.Handler(nil)
	assert.ErrorContains(t, err, "guard is nil")

	// The caller's map is copied.
	labels := prometheus.Labels{"instance_name": "a"}
	c, err := sluiceprom.NewCollector(g, sluiceprom.WithConstLabels(labels))
	require.NoError(t, err)
	labels["instance_name"] = "changed"
	fams = scrape(t, serve(t, c))
	must(t, fams, 0, "sluice_events_dropped_total", "instance_name", "a")
}

// TestTwoGuards registers the collectors of two Guards in one registry:
// they need a const label to tell them apart.
func TestTwoGuards(t *testing.T) {
	var cs []*sluiceprom.Collector
	for i, name := range []string{"public", "internal"} {
		g, err := core.New(quiet)
		require.NoError(t, err)
		defer g.Close()
		for range i + 1 {
			e, err := g.Enter(context.Background(), "GET /x")
			require.NoError(t, err)
			e.Exit(nil)
		}
		c, err := sluiceprom.NewCollector(g, sluiceprom.WithConstLabels(prometheus.Labels{"guard": name}))
		require.NoError(t, err)
		cs = append(cs, c)
	}
	fams := scrape(t, serve(t, cs[0], cs[1]))
	must(t, fams, 1, "sluice_requests_total", "guard", "public", "sluice_resource", "GET /x", "sluice_result", "passed")
	must(t, fams, 2, "sluice_requests_total", "guard", "internal", "sluice_resource", "GET /x", "sluice_result", "passed")

	// Without the label, the second collector's metrics are the first's.
	g, err := core.New(quiet)
	require.NoError(t, err)
	defer g.Close()
	a, err := sluiceprom.NewCollector(g)
	require.NoError(t, err)
	b, err := sluiceprom.NewCollector(g)
	require.NoError(t, err)
	reg := prometheus.NewPedanticRegistry()
	require.NoError(t, reg.Register(a))
	var are prometheus.AlreadyRegisteredError
	assert.ErrorAs(t, reg.Register(b), &are)
}

// benchGuard returns a Guard with 100 resources that have seen traffic
// and 10 rules: 4 flow, 3 concurrency and 3 breaker rules.
func benchGuard(b testing.TB) *core.Guard {
	var rules []core.Rule
	for i := range 10 {
		r := core.Rule{Resource: fmt.Sprintf("GET /r%d/*", i)}
		switch {
		case i < 4:
			r.Kind, r.Limit = core.KindFlow, 1000
		case i < 7:
			r.Kind, r.Limit = core.KindConcurrency, 100
		default:
			r.Kind, r.Strategy, r.Threshold = core.KindBreaker, "error-ratio", 0.5
		}
		rules = append(rules, r)
	}
	g, err := core.New(core.WithRules(rules...), quiet)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { g.Close() })
	for i := range 100 {
		if e, err := g.Enter(context.Background(), fmt.Sprintf("GET /r%d/item%d", i%10, i)); err == nil {
			e.Exit(nil)
		}
	}
	if n := len(g.Snapshot().Resources); n != 100 {
		b.Fatalf("%d resources", n)
	}
	return g
}

// BenchmarkCollect is the collector's part of a scrape of a Guard with 100
// resources and 10 rules: one Snapshot and 1,470 const metrics
// (TestBenchCollectCount checks the number).
func BenchmarkCollect(b *testing.B) {
	c, err := sluiceprom.NewCollector(benchGuard(b))
	if err != nil {
		b.Fatal(err)
	}
	ch := make(chan prometheus.Metric, 4096)
	n := 0
	b.ReportAllocs()
	for b.Loop() {
		c.Collect(ch)
		n = len(ch)
		for len(ch) > 0 {
			<-ch
		}
	}
	b.ReportMetric(float64(n), "metrics/op")
}

// TestBenchCollectCount: the number of metrics BenchmarkCollect's comment
// gives is the number it collects. It said "about 1,250" where it
// collected 1,470.
func TestBenchCollectCount(t *testing.T) {
	src, err := os.ReadFile("collector_test.go")
	require.NoError(t, err)
	m := regexp.MustCompile(`one Snapshot and (?:about )?([0-9,]+) const metrics`).FindSubmatch(src)
	require.NotNil(t, m)
	said, err := strconv.Atoi(strings.ReplaceAll(string(m[1]), ",", ""))
	require.NoError(t, err)
	c, err := sluiceprom.NewCollector(benchGuard(t))
	require.NoError(t, err)
	ch := make(chan prometheus.Metric, 4096)
	c.Collect(ch)
	assert.Equal(t, said, len(ch))
}

// BenchmarkSnapshot is the Guard's part of BenchmarkCollect.
func BenchmarkSnapshot(b *testing.B) {
	g := benchGuard(b)
	b.ReportAllocs()
	for b.Loop() {
		g.Snapshot()
	}
}

// BenchmarkScrape is a whole scrape through Handler: Collect, the
// registry's Gather and the text encoding.
func BenchmarkScrape(b *testing.B) {
	h, err := sluiceprom.Handler(benchGuard(b))
	if err != nil {
		b.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	b.ReportAllocs()
	for b.Loop() {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatal(rec.Code)
		}
	}
}

func TestAdaptiveRuleMetrics(t *testing.T) {
	g, err := core.New(quiet, core.WithRules(
		core.Rule{Name: "found", Resource: "GET /*", Kind: core.KindAdaptive, MinLimit: 2, MaxLimit: 3},
	))
	require.NoError(t, err)
	defer g.Close()
	c, err := sluiceprom.NewCollector(g)
	require.NoError(t, err)
	url := serve(t, c)
	for range 2 {
		e, err := g.Enter(context.Background(), "GET /x")
		require.NoError(t, err)
		defer e.Exit(nil)
	}
	fams := scrape(t, url)
	must(t, fams, 3, "sluice_rule_limit", "sluice_rule_name", "found", "sluice_rule_kind", "adaptive", "sluice_rule_resource", "GET /*")
	must(t, fams, 2, "sluice_rule_usage", "sluice_rule_name", "found", "sluice_rule_kind", "adaptive", "sluice_rule_resource", "GET /*")
}
