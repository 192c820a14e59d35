package sluiceprom_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/clock"
	sluiceprom "github.com/sluicekit/sluice/core/prometheus"
)

// gather returns the metric families of a pedantic registry holding only
// a collector of g, by name.
func gather(t *testing.T, g *core.Guard) map[string]*dto.MetricFamily {
	t.Helper()
	c, err := sluiceprom.NewCollector(g)
	require.NoError(t, err)
	reg := prometheus.NewPedanticRegistry()
	require.NoError(t, reg.Register(c))
	fams, err := reg.Gather()
	require.NoError(t, err)
	out := map[string]*dto.MetricFamily{}
	for _, f := range fams {
		out[f.GetName()] = f
	}
	return out
}

// The response time histogram has exact classic buckets and native
// buckets of schema 0.
func TestRequestDurationHistogram(t *testing.T) {
	fc := clock.NewFake(time.Hour)
	g, err := core.New(core.WithClock(fc), quiet)
	require.NoError(t, err)
	defer g.Close()
	for _, rt := range []time.Duration{0, 20 * time.Microsecond, 100 * time.Microsecond, 100 * time.Microsecond,
		3 * time.Millisecond, 200 * time.Millisecond, time.Second, 40 * time.Second} {
		e, err := g.Enter(context.Background(), "GET /h")
		require.NoError(t, err)
		fc.Advance(rt)
		e.Exit(nil)
	}
	f := gather(t, g)["sluice_request_duration_seconds"]
	require.NotNil(t, f)
	assert.Equal(t, dto.MetricType_HISTOGRAM, f.GetType())
	require.Len(t, f.GetMetric(), 1)
	h := f.GetMetric()[0].GetHistogram()
	assert.Equal(t, uint64(8), h.GetSampleCount())
	assert.InDelta(t, 41.20322, h.GetSampleSum(), 1e-9)

	cumulative := map[float64]uint64{}
	for _, b := range h.GetBucket() {
		cumulative[b.GetUpperBound()] = b.GetCumulativeCount()
	}
	p := func(e int) float64 { return math.Ldexp(1, e) }
	assert.Equal(t, map[float64]uint64{
		p(-15): 2, // 0, 20µs (2^-15 s is 30.5µs)
		p(-13): 4, // 100µs twice (122µs)
		p(-11): 4, p(-9): 4,
		p(-7): 5, // 3ms (7.8ms)
		p(-5): 5,
		p(-3): 5, p(-1): 6, // 200ms (500ms)
		p(1): 7,          // 1s
		p(3): 7, p(5): 7, // 40s is over the last bound
	}, cumulative)

	// Native: 0 in the zero bucket (up to 2^-17 s); 20µs in (2^-16, 2^-15],
	// 100µs in (2^-14, 2^-13], 3ms in (2^-9, 2^-8], 200ms in (2^-3, 2^-2],
	// 1s in (2^-1, 2^0], 40s in the last, (2^5, 2^6].
	assert.Equal(t, int32(0), h.GetSchema())
	assert.Equal(t, p(-17), h.GetZeroThreshold())
	assert.Equal(t, uint64(1), h.GetZeroCount())
	native := map[int]int64{}
	idx, k, count := 0, 0, int64(0)
	for _, s := range h.GetPositiveSpan() {
		idx += int(s.GetOffset()) // from the end of the span before
		for range s.GetLength() {
			count += h.GetPositiveDelta()[k]
			if k++; count != 0 {
				native[idx] = count
			}
			idx++
		}
	}
	assert.Equal(t, map[int]int64{-15: 1, -13: 2, -8: 1, -2: 1, 0: 1, 6: 1}, native)
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
	fams := gather(t, g)
	must(t, fams, 3, "sluice_rule_shadow_blocked_total", "sluice_rule_name", "try", "sluice_rule_kind", "flow", "sluice_rule_resource", "GET /s")
	must(t, fams, 0, "sluice_rule_blocked_total", "sluice_rule_name", "try")
	_, ok := value(fams, "sluice_rule_shadow_blocked_total", "sluice_rule_name", "enforced")
	assert.False(t, ok, "no series for a rule never in shadow")
}
