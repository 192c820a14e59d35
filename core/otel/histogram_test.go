package sluiceotel_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/clock"
	sluiceotel "github.com/sluicekit/sluice/core/otel"
)

// The Producer hands the SDK an explicit bucket histogram per resource.
func TestProducerDurationHistogram(t *testing.T) {
	fc := clock.NewFake(time.Hour)
	g, err := core.New(core.WithClock(fc), quiet)
	require.NoError(t, err)
	defer g.Close()
	for _, rt := range []time.Duration{0, 20 * time.Microsecond, 100 * time.Microsecond, 3 * time.Millisecond, time.Second, 40 * time.Second} {
		e, err := g.Enter(context.Background(), "GET /h")
		require.NoError(t, err)
		fc.Advance(rt)
		e.Exit(nil)
	}
	p, err := sluiceotel.NewProducer(g)
	require.NoError(t, err)
	r := sdkmetric.NewManualReader(sdkmetric.WithProducer(p))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(r))
	defer mp.Shutdown(context.Background())
	_, err = sluiceotel.Register(g, sluiceotel.WithMeterProvider(mp))
	require.NoError(t, err)

	m, ok := collect(t, r)["sluice.request.duration"]
	require.True(t, ok)
	assert.Equal(t, "s", m.Unit)
	h, ok := m.Data.(metricdata.Histogram[float64])
	require.True(t, ok, "%T", m.Data)
	assert.Equal(t, metricdata.CumulativeTemporality, h.Temporality)
	require.Len(t, h.DataPoints, 1)
	dp := h.DataPoints[0]
	v, _ := dp.Attributes.Value("sluice.resource")
	assert.Equal(t, "GET /h", v.AsString())
	assert.Equal(t, uint64(6), dp.Count)
	assert.InDelta(t, 41.00312, dp.Sum, 1e-9)
	var want []float64
	for e := -15; e <= 5; e += 2 {
		want = append(want, math.Ldexp(1, e))
	}
	assert.Equal(t, want, dp.Bounds, "the Prometheus exporter's classic bounds")
	// 0 and 20µs up to 2^-15 s; 100µs up to 2^-13; 3ms up to 2^-7; 1s up
	// to 2^1; 40s over 2^5.
	assert.Equal(t, []uint64{2, 1, 0, 0, 1, 0, 0, 0, 1, 0, 0, 1}, dp.BucketCounts)
}

func TestProducerNilGuard(t *testing.T) {
	_, err := sluiceotel.NewProducer(nil)
	assert.ErrorContains(t, err, "guard is nil")
}

// A shadow rule's would-be blocks are counted apart from blocks.
func TestRuleShadowBlocked(t *testing.T) {
	g, err := core.New(core.WithClock(clock.NewFake(time.Hour)), quiet, core.WithRules(
		core.Rule{Name: "try", Resource: "GET /s", Kind: core.KindFlow, Limit: 2, Shadow: true},
		core.Rule{Name: "enforced", Resource: "GET /s", Kind: core.KindFlow, Limit: 100}))
	require.NoError(t, err)
	defer g.Close()
	for range 5 {
		e, err := g.Enter(context.Background(), "GET /s")
		require.NoError(t, err)
		e.Exit(nil)
	}
	ps := points(collect(t, reader(t, g))["sluice.rule.shadow_blocked"])
	require.Len(t, ps, 1, "a point for the shadow rule only")
	assert.Equal(t, "try", ps[0].attrs["sluice.rule.name"])
	assert.Equal(t, 3.0, ps[0].value)
}
