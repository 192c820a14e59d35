package sluiceotel_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/clock"
	sluiceotel "github.com/sluicekit/sluice/core/otel"
	"github.com/sluicekit/sluice/core/store"
)

var quiet = core.WithLogger(slog.New(slog.DiscardHandler))

// reader registers g's instruments with a MeterProvider read by a
// ManualReader, and returns the reader.
func reader(t testing.TB, g *core.Guard) *sdkmetric.ManualReader {
	t.Helper()
	r := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(r))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	_, err := sluiceotel.Register(g, sluiceotel.WithMeterProvider(mp))
	require.NoError(t, err)
	return r
}

// collect reads r once and returns its metrics by name.
func collect(t testing.TB, r *sdkmetric.ManualReader) map[string]metricdata.Metrics {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, r.Collect(context.Background(), &rm))
	out := map[string]metricdata.Metrics{}
	for _, sm := range rm.ScopeMetrics {
		assert.Equal(t, "github.com/sluicekit/sluice/core/otel", sm.Scope.Name)
		assert.NotEmpty(t, sm.Scope.Version, "the scope has the module's version")
		for _, m := range sm.Metrics {
			out[m.Name] = m
		}
	}
	return out
}

// point is one data point: its attributes as "key=value" pairs, and its
// value.
type point struct {
	attrs map[string]string
	value float64
}

// points returns the data points of m, whatever its aggregation.
func points(m metricdata.Metrics) []point {
	attrs := func(s attribute.Set) map[string]string {
		out := map[string]string{}
		for _, kv := range s.ToSlice() {
			out[string(kv.Key)] = kv.Value.String()
		}
		return out
	}
	var out []point
	switch d := m.Data.(type) {
	case metricdata.Sum[int64]:
		for _, p := range d.DataPoints {
			out = append(out, point{attrs(p.Attributes), float64(p.Value)})
		}
	case metricdata.Sum[float64]:
		for _, p := range d.DataPoints {
			out = append(out, point{attrs(p.Attributes), p.Value})
		}
	case metricdata.Gauge[int64]:
		for _, p := range d.DataPoints {
			out = append(out, point{attrs(p.Attributes), float64(p.Value)})
		}
	case metricdata.Gauge[float64]:
		for _, p := range d.DataPoints {
			out = append(out, point{attrs(p.Attributes), p.Value})
		}
	}
	return out
}

// value returns the value of the data point of metric name whose
// attributes include the key-value pairs kv, and whether there is one.
func value(ms map[string]metricdata.Metrics, name string, kv ...string) (float64, bool) {
next:
	for _, p := range points(ms[name]) {
		for i := 0; i+1 < len(kv); i += 2 {
			if v, ok := p.attrs[kv[i]]; !ok || v != kv[i+1] {
				continue next
			}
		}
		return p.value, true
	}
	return 0, false
}

// must asserts that the data point of metric name with attributes kv has
// the value want.
func must(t *testing.T, ms map[string]metricdata.Metrics, want float64, name string, kv ...string) {
	t.Helper()
	v, ok := value(ms, name, kv...)
	if assert.True(t, ok, "no data point %s%q", name, kv) {
		assert.InDelta(t, want, v, 1e-9, "%s%q", name, kv)
	}
}

// attrValues returns the values of attribute key in the points of metric
// name, sorted.
func attrValues(ms map[string]metricdata.Metrics, name, key string) []string {
	var out []string
	for _, p := range points(ms[name]) {
		if v, ok := p.attrs[key]; ok {
			out = append(out, v)
		}
	}
	slices.Sort(out)
	return out
}

// TestMetrics drives a Guard with flow, concurrency and breaker rules on a
// fake clock and reads the exact counts back through a ManualReader.
func TestMetrics(t *testing.T) {
	fc := clock.NewFake(time.Hour)
	g, err := core.New(core.WithClock(fc), quiet, core.WithRules(
		core.Rule{Name: "hello-rate", Resource: "GET /hello", Kind: core.KindFlow, Limit: 3},
		core.Rule{Name: "inflight", Resource: "GET /*", Kind: core.KindConcurrency, Limit: 2},
		core.Rule{Name: "fail-breaker", Resource: "GET /fail", Kind: core.KindBreaker, Strategy: "error-count", Threshold: 2, MinRequests: 1, OpenFor: 5 * time.Second},
	))
	require.NoError(t, err)
	defer g.Close()
	r := reader(t, g)

	// Before any request: the rules' points are there, at zero; no
	// resource has been seen yet.
	ms := collect(t, r)
	must(t, ms, 0, "sluice.rule.blocked", "sluice.rule.name", "hello-rate", "sluice.rule.kind", "flow", "sluice.rule.resource", "GET /hello")
	must(t, ms, 1, "sluice.breaker.state", "sluice.rule.name", "fail-breaker", "sluice.rule.resource", "GET /fail", "sluice.breaker.state", "closed")
	must(t, ms, 0, "sluice.breaker.state", "sluice.rule.name", "fail-breaker", "sluice.breaker.state", "open")
	assert.Empty(t, points(ms["sluice.requests"]))

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

	ms = collect(t, r)
	// Resources.
	res := "sluice.resource"
	must(t, ms, 3, "sluice.requests", res, "GET /hello", "sluice.result", "passed")
	must(t, ms, 2, "sluice.requests", res, "GET /hello", "sluice.result", "flow")
	must(t, ms, 3, "sluice.completed_requests", res, "GET /hello")
	must(t, ms, 0, "sluice.failed_requests", res, "GET /hello")
	must(t, ms, 0.3, "sluice.response.time", res, "GET /hello")
	must(t, ms, 0, "sluice.active_requests", res, "GET /hello")
	must(t, ms, 2, "sluice.requests", res, "GET /fail", "sluice.result", "passed")
	must(t, ms, 2, "sluice.failed_requests", res, "GET /fail")
	must(t, ms, 1, "sluice.requests", res, "GET /fail", "sluice.result", "breaker")
	must(t, ms, 2, "sluice.requests", res, "GET /items/{id}", "sluice.result", "passed")
	must(t, ms, 1, "sluice.requests", res, "GET /items/{id}", "sluice.result", "concurrency")
	must(t, ms, 2, "sluice.active_requests", res, "GET /items/{id}")
	// Every result has a point for every resource, zero or not.
	for _, name := range []string{"GET /hello", "GET /fail", "GET /items/{id}"} {
		for _, result := range append([]string{"passed"}, core.BlockReasons()...) {
			_, ok := value(ms, "sluice.requests", res, name, "sluice.result", result)
			assert.True(t, ok, "%s %s", name, result)
		}
	}
	assert.Len(t, points(ms["sluice.requests"]), 3*(1+len(core.BlockReasons())))
	// Rules.
	must(t, ms, 2, "sluice.rule.blocked", "sluice.rule.name", "hello-rate", "sluice.rule.kind", "flow", "sluice.rule.resource", "GET /hello")
	must(t, ms, 1, "sluice.rule.blocked", "sluice.rule.name", "inflight", "sluice.rule.kind", "concurrency", "sluice.rule.resource", "GET /*")
	must(t, ms, 1, "sluice.rule.blocked", "sluice.rule.name", "fail-breaker", "sluice.rule.kind", "breaker")
	must(t, ms, 2, "sluice.rule.active_requests", "sluice.rule.name", "inflight", "sluice.rule.resource", "GET /*")
	must(t, ms, 5, "sluice.rule.evaluated", "sluice.rule.name", "hello-rate")
	must(t, ms, 5+3+3, "sluice.rule.evaluated", "sluice.rule.name", "inflight")
	must(t, ms, 3, "sluice.rule.evaluated", "sluice.rule.name", "fail-breaker")
	must(t, ms, 3, "sluice.rule.resources", "sluice.rule.name", "inflight")
	must(t, ms, 1, "sluice.rule.resources", "sluice.rule.name", "hello-rate")
	must(t, ms, 0, "sluice.rule.unmatched", "sluice.rule.name", "hello-rate")
	assert.Equal(t, []string{"inflight"}, attrValues(ms, "sluice.rule.active_requests", "sluice.rule.name"), "only concurrency rules have in-flight points")
	must(t, ms, 1, "sluice.breaker.state", "sluice.rule.name", "fail-breaker", "sluice.breaker.state", "open")
	must(t, ms, 0, "sluice.breaker.state", "sluice.rule.name", "fail-breaker", "sluice.breaker.state", "closed")
	must(t, ms, 0, "sluice.breaker.state", "sluice.rule.name", "fail-breaker", "sluice.breaker.state", "half-open")
	must(t, ms, 1, "sluice.breaker.trips", "sluice.rule.name", "fail-breaker", "sluice.rule.resource", "GET /fail")
	assert.Empty(t, points(ms["sluice.rule.fallbacks"]), "no rule has a store")
	assert.Empty(t, points(ms["sluice.store.healthy"]), "the Guard has no store")
	must(t, ms, 0, "sluice.events.dropped")

	// The held requests exit; after OpenFor a probe makes the breaker
	// half-open while it runs, and closes it when it succeeds.
	a.Exit(nil)
	b.Exit(nil)
	fc.Advance(5 * time.Second)
	probe, err := g.Enter(ctx, "GET /fail")
	require.NoError(t, err)
	ms = collect(t, r)
	must(t, ms, 1, "sluice.breaker.state", "sluice.rule.name", "fail-breaker", "sluice.breaker.state", "half-open")
	must(t, ms, 1, "sluice.rule.active_requests", "sluice.rule.name", "inflight")
	probe.Exit(nil)
	ms = collect(t, r)
	must(t, ms, 1, "sluice.breaker.state", "sluice.rule.name", "fail-breaker", "sluice.breaker.state", "closed")
	must(t, ms, 0, "sluice.rule.active_requests", "sluice.rule.name", "inflight")
	must(t, ms, 0, "sluice.active_requests", res, "GET /items/{id}")
	must(t, ms, 3, "sluice.completed_requests", res, "GET /fail")

	// A rule's counts survive a reload that keeps its name, kind and
	// resource; a removed rule's points go.
	require.NoError(t, g.SetRules([]core.Rule{{Name: "hello-rate", Resource: "GET /hello", Kind: core.KindFlow, Limit: 3}}))
	ms = collect(t, r)
	must(t, ms, 2, "sluice.rule.blocked", "sluice.rule.name", "hello-rate")
	assert.Equal(t, []string{"hello-rate"}, attrValues(ms, "sluice.rule.blocked", "sluice.rule.name"))
	assert.Empty(t, points(ms["sluice.breaker.state"]))

	// A rule that matches no request is flagged after 5 minutes (the
	// default of core.WithUnmatchedAfter).
	require.NoError(t, g.SetRules([]core.Rule{{Name: "typo", Resource: "GET /helo", Kind: core.KindFlow, Limit: 3}}))
	must(t, collect(t, r), 0, "sluice.rule.unmatched", "sluice.rule.name", "typo")
	fc.Advance(5 * time.Minute)
	ms = collect(t, r)
	must(t, ms, 1, "sluice.rule.unmatched", "sluice.rule.name", "typo", "sluice.rule.kind", "flow", "sluice.rule.resource", "GET /helo")
	must(t, ms, 0, "sluice.rule.resources", "sluice.rule.name", "typo")
}

// TestInstruments checks each instrument's kind, monotonicity, temporality
// and unit: counters are cumulative monotonic sums, in-flight counts and
// states non-monotonic sums (UpDownCounters), flags gauges.
func TestInstruments(t *testing.T) {
	fc := clock.NewFake(time.Hour)
	g, err := core.New(core.WithClock(fc), quiet, core.WithStore("shared", failing{}), core.WithRules(
		core.Rule{Name: "c", Resource: "r", Kind: core.KindConcurrency, Limit: 1},
		core.Rule{Name: "b", Resource: "r", Kind: core.KindBreaker, Strategy: "error-count", Threshold: 2, MinRequests: 1, OpenFor: time.Second},
		core.Rule{Name: "s", Resource: "r", Kind: core.KindFlow, Limit: 10, Store: "shared", OnFailure: core.FailOpen},
		core.Rule{Name: "a", Resource: "r", Kind: core.KindAdaptive},
	))
	require.NoError(t, err)
	defer g.Close()
	e, err := g.Enter(context.Background(), "r")
	require.NoError(t, err)
	e.Exit(nil)
	const (
		counter = "counter"
		upDown  = "updowncounter"
		gauge   = "gauge"
	)
	want := map[string]struct{ kind, unit string }{
		"sluice.requests":             {counter, "{request}"},
		"sluice.completed_requests":   {counter, "{request}"},
		"sluice.failed_requests":      {counter, "{request}"},
		"sluice.response.time":        {counter, "s"},
		"sluice.active_requests":      {upDown, "{request}"},
		"sluice.rule.blocked":         {counter, "{request}"},
		"sluice.rule.evaluated":       {counter, "{request}"},
		"sluice.rule.fallbacks":       {counter, "{decision}"},
		"sluice.rule.active_requests": {upDown, "{request}"},
		"sluice.rule.resources":       {upDown, "{resource}"},
		"sluice.rule.unmatched":       {gauge, "{rule}"},
		"sluice.rule.limit":           {gauge, "{request}"},
		"sluice.rule.usage":           {gauge, "{request}"},
		"sluice.breaker.state":        {upDown, "{breaker}"},
		"sluice.breaker.trips":        {counter, "{trip}"},
		"sluice.store.healthy":        {gauge, "{store}"},
		"sluice.store.errors":         {counter, "{error}"},
		"sluice.store.fallbacks":      {counter, "{decision}"},
		"sluice.events.dropped":       {counter, "{event}"},
	}
	ms := collect(t, reader(t, g))
	assert.ElementsMatch(t, mapKeys(want), mapKeys(ms), "every instrument reports, none beyond the documented ones")
	for name, w := range want {
		m, ok := ms[name]
		if !assert.True(t, ok, name) {
			continue
		}
		assert.Equal(t, w.unit, m.Unit, name)
		assert.NotEmpty(t, m.Description, name)
		kind := gauge
		switch d := m.Data.(type) {
		case metricdata.Sum[int64]:
			kind = map[bool]string{true: counter, false: upDown}[d.IsMonotonic]
			assert.Equal(t, metricdata.CumulativeTemporality, d.Temporality, name)
		case metricdata.Sum[float64]:
			kind = map[bool]string{true: counter, false: upDown}[d.IsMonotonic]
			assert.Equal(t, metricdata.CumulativeTemporality, d.Temporality, name)
		case metricdata.Gauge[int64]:
		default:
			t.Errorf("%s: data %T", name, m.Data)
		}
		assert.Equal(t, w.kind, kind, name)
	}
}

func mapKeys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// failing is a store.Store whose backend is always unreachable.
type failing struct{}

func (failing) Take(context.Context, string, store.Limit, int64) (store.Decision, error) {
	return store.Decision{}, fmt.Errorf("failing: %w", store.ErrUnavailable)
}

func (failing) Undo(context.Context, string, store.Limit, store.Decision, int64) error {
	return fmt.Errorf("failing: %w", store.ErrUnavailable)
}

func (failing) Close() error { return nil }

// TestStores reads a failing store's health, errors and fallbacks, and
// the fallbacks of the rule that uses it.
func TestStores(t *testing.T) {
	fc := clock.NewFake(time.Hour)
	g, err := core.New(core.WithClock(fc), quiet, core.WithStore("shared", failing{}), core.WithStoreBreaker(1, 0), core.WithRules(
		core.Rule{Name: "shared", Resource: "GET /s", Kind: core.KindFlow, Limit: 100, Store: "shared", OnFailure: core.FailLocal, LocalLimit: 1},
	))
	require.NoError(t, err)
	defer g.Close()
	r := reader(t, g)
	ms := collect(t, r)
	must(t, ms, 1, "sluice.store.healthy", "sluice.store.name", "shared")
	must(t, ms, 0, "sluice.store.errors", "sluice.store.name", "shared")
	must(t, ms, 0, "sluice.rule.fallbacks", "sluice.rule.name", "shared")

	// The first call fails and opens the store's breaker; the local limit
	// admits one and blocks the other two.
	var blocked int
	for range 3 {
		e, err := g.Enter(context.Background(), "GET /s")
		if err != nil {
			blocked++
			continue
		}
		e.Exit(nil)
	}
	require.Equal(t, 2, blocked)
	ms = collect(t, r)
	must(t, ms, 0, "sluice.store.healthy", "sluice.store.name", "shared")
	must(t, ms, 1, "sluice.store.errors", "sluice.store.name", "shared")
	must(t, ms, 3, "sluice.store.fallbacks", "sluice.store.name", "shared")
	must(t, ms, 3, "sluice.rule.fallbacks", "sluice.rule.name", "shared", "sluice.rule.kind", "flow", "sluice.rule.resource", "GET /s")
	must(t, ms, 2, "sluice.requests", "sluice.resource", "GET /s", "sluice.result", "fallback")
}

// TestBoundedAttributes floods a Guard with distinct resources and param
// values: the points stay bounded by the Guard's resource bound, and no
// param value becomes an attribute. Names that are not valid UTF-8 are
// reported valid.
func TestBoundedAttributes(t *testing.T) {
	g, err := core.New(quiet, core.WithMaxResources(8), core.WithRules(
		core.Rule{Name: "per-user", Resource: "*", Kind: core.KindHotspot, Param: "user", Limit: 1, Window: time.Minute},
	))
	require.NoError(t, err)
	defer g.Close()
	for i := range 1000 {
		ctx := context.Background()
		e, err := g.Enter(ctx, fmt.Sprintf("GET /r%d\xff", i), core.WithParams(core.ParamMap{"user": {fmt.Sprintf("user-%d", i)}}))
		if err == nil {
			e.Exit(nil)
		}
	}
	ms := collect(t, reader(t, g))
	resources := attrValues(ms, "sluice.completed_requests", "sluice.resource")
	assert.LessOrEqual(t, len(resources), 8+1, "the Guard's bound, and core.OverflowResource")
	assert.Contains(t, resources, core.OverflowResource)
	for name, m := range ms {
		for _, p := range points(m) {
			for k, v := range p.attrs {
				assert.NotContains(t, v, "user-", "%s %s", name, k)
				assert.NotContains(t, v, "\xff", "%s %s", name, k)
			}
		}
	}
	must(t, ms, 1000, "sluice.rule.evaluated", "sluice.rule.name", "per-user")
}

// TestConcurrentCollections collects while requests run, from several
// goroutines: counters never go down between collections of one reader.
func TestConcurrentCollections(t *testing.T) {
	g, err := core.New(quiet)
	require.NoError(t, err)
	defer g.Close()
	r := reader(t, g)
	var wg sync.WaitGroup
	var sent atomic.Int64
	stop := make(chan struct{})
	for range 2 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if e, err := g.Enter(context.Background(), "r"); err == nil {
					e.Exit(nil)
				}
				sent.Add(1)
			}
		})
	}
	last := -1.0
	for range 50 {
		// Requests ran since the last collection: traffic runs between and
		// around every collection, however the goroutines are scheduled.
		since := sent.Load()
		require.Eventually(t, func() bool { return sent.Load() > since }, time.Minute, time.Millisecond)
		v, _ := value(collect(t, r), "sluice.requests", "sluice.result", "passed")
		assert.GreaterOrEqual(t, v, last)
		last = v
	}
	close(stop)
	wg.Wait()
}

// TestRegister checks Register's errors and that Unregister stops the
// reports.
func TestRegister(t *testing.T) {
	g, err := core.New(quiet)
	require.NoError(t, err)
	defer g.Close()
	_, err = sluiceotel.Register(nil)
	assert.ErrorContains(t, err, "guard is nil")
	_, err = sluiceotel.Register(g, nil)
	assert.ErrorContains(t, err, "nil option")
	_, err = sluiceotel.Register(g, sluiceotel.WithMeterProvider(nil))
	assert.ErrorContains(t, err, "WithMeterProvider: provider is nil")

	r := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(r))
	defer mp.Shutdown(context.Background())
	reg, err := sluiceotel.Register(g, sluiceotel.WithMeterProvider(mp))
	require.NoError(t, err)
	e, err := g.Enter(context.Background(), "r")
	require.NoError(t, err)
	e.Exit(nil)
	must(t, collect(t, r), 1, "sluice.requests", "sluice.resource", "r", "sluice.result", "passed")
	require.NoError(t, reg.Unregister())
	for name, m := range collect(t, r) {
		assert.Empty(t, points(m), name)
	}
}

// BenchmarkCollect measures one collection through the SDK's ManualReader
// of a Guard with 100 resources and 4 rules:
//
//	go -C core/otel test -run '^$' -bench Collect -benchmem .
func BenchmarkCollect(b *testing.B) {
	g, err := core.New(quiet, core.WithRules(
		core.Rule{Name: "rate", Resource: "GET /*", Kind: core.KindFlow, Limit: 1 << 30},
		core.Rule{Name: "inflight", Resource: "*", Kind: core.KindConcurrency, Limit: 1 << 20},
		core.Rule{Name: "per-user", Resource: "*", Kind: core.KindHotspot, Param: "user", Limit: 1 << 20},
		core.Rule{Name: "breaker", Resource: "GET /r0", Kind: core.KindBreaker, Strategy: "error-count", Threshold: 5, MinRequests: 1, OpenFor: time.Second},
	))
	require.NoError(b, err)
	defer g.Close()
	for i := range 100 {
		if e, err := g.Enter(context.Background(), fmt.Sprintf("GET /r%d", i)); err == nil {
			e.Exit(nil)
		}
	}
	r := reader(b, g)
	var rm metricdata.ResourceMetrics
	b.ReportAllocs()
	for b.Loop() {
		if err := r.Collect(context.Background(), &rm); err != nil {
			b.Fatal(err)
		}
	}
}

func TestAdaptiveRule(t *testing.T) {
	g, err := core.New(quiet, core.WithRules(
		core.Rule{Name: "found", Resource: "GET /*", Kind: core.KindAdaptive, MinLimit: 2, MaxLimit: 3},
	))
	require.NoError(t, err)
	defer g.Close()
	r := reader(t, g)
	for range 2 {
		e, err := g.Enter(context.Background(), "GET /x")
		require.NoError(t, err)
		defer e.Exit(nil)
	}
	ms := collect(t, r)
	must(t, ms, 3, "sluice.rule.limit", "sluice.rule.name", "found", "sluice.rule.kind", "adaptive", "sluice.rule.resource", "GET /*")
	must(t, ms, 2, "sluice.rule.usage", "sluice.rule.name", "found", "sluice.rule.kind", "adaptive")
}
