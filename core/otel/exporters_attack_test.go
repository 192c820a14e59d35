package sluiceotel_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/clock"
	sluiceotel "github.com/sluicekit/sluice/core/otel"
	sluiceprom "github.com/sluicekit/sluice/core/prometheus"
)

// TestExportersAddUpNamesOfOneLabel: resources whose names differ only in
// invalid UTF-8 (a resource function naming requests by their raw path,
// and a client sending /x%FF and /x%FE) come to one label value; both
// exporters report it once, the Guard counting those names as one
// resource, where the Prometheus collector's scrape failed (or dropped a
// series) on the duplicate and the two exporters disagreed. A rule naming
// the resource with invalid bytes applies to every such name.
func TestExportersAddUpNamesOfOneLabel(t *testing.T) {
	fc := clock.NewFake(time.Hour)
	g, err := core.New(core.WithClock(fc), quiet, core.WithRules(
		core.Rule{Name: "none", Resource: "GET /x\xfe", Kind: core.KindFlow, Limit: 3, Window: time.Hour},
	))
	require.NoError(t, err)
	defer g.Close()
	ctx := context.Background()
	for _, r := range []string{"GET /x\xff", "GET /x\xff", "GET /x\xfe", "GET /x\uFFFD", "GET /y"} {
		e, err := g.Enter(ctx, r)
		if err == nil {
			fc.Advance(time.Millisecond)
			e.Exit(errors.New("failed"))
		}
	}
	// The collector in a registry served with promhttp's default options,
	// which fail a scrape on any error.
	c, err := sluiceprom.NewCollector(g)
	require.NoError(t, err)
	reg := prometheus.NewRegistry()
	require.NoError(t, reg.Register(c))
	p, err := sluiceotel.NewProducer(g)
	require.NoError(t, err)
	oreg := prometheus.NewRegistry()
	exp, err := otelprom.New(otelprom.WithRegisterer(oreg), otelprom.WithProducer(p))
	require.NoError(t, err)
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(exp))
	defer func() { _ = mp.Shutdown(ctx) }()
	_, err = sluiceotel.Register(g, sluiceotel.WithMeterProvider(mp))
	require.NoError(t, err)
	prom := series(t, scrapeText(t, promhttp.HandlerFor(reg, promhttp.HandlerOpts{})))
	otel := series(t, scrapeText(t, promhttp.HandlerFor(oreg, promhttp.HandlerOpts{})))
	assert.Equal(t, prom, otel)
	const x = `sluice_resource="GET /x` + "\uFFFD" + `"`
	for k, want := range map[string]string{
		`sluice_requests_total{` + x + `,sluice_result="passed"}`: "COUNTER 3",
		`sluice_requests_total{` + x + `,sluice_result="flow"}`:   "COUNTER 1",
		`sluice_failed_requests_total{` + x + `}`:                 "COUNTER 3",
		`sluice_request_duration_seconds{` + x + `}`:              "HISTOGRAM 3 0.003 12",
	} {
		assert.Equal(t, want, prom[k], k)
	}
}
