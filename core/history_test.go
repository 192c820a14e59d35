package core_test

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core"
)

// The bounds of a Guard's history (see Guard.History).
const (
	historySeconds   = 600
	historyResources = 1000
)

// nan stands for NaN in the tables below: NaN equals nothing.
const nan = -1.0

// plain returns s with NaN written as nan, to compare.
func plain(s []float64) []float64 {
	out := make([]float64, len(s))
	for i, v := range s {
		out[i] = v
		if math.IsNaN(v) {
			out[i] = nan
		}
	}
	return out
}

func resourceHistory(t *testing.T, h core.History, name string) core.ResourceHistory {
	t.Helper()
	for _, r := range h.Resources {
		if r.Resource == name {
			return r
		}
	}
	t.Fatalf("no history of resource %q in %+v", name, h.Resources)
	return core.ResourceHistory{}
}

func ruleHistory(t *testing.T, h core.History, name string) core.RuleHistory {
	t.Helper()
	for _, r := range h.Rules {
		if r.Rule == name {
			return r
		}
	}
	t.Fatalf("no history of rule %q", name)
	return core.RuleHistory{}
}

// TestHistoryRecordsEachSecond drives a Guard on a fake clock through a
// table of seconds and reads its history after each: every second's counts
// land in that second, seconds not sampled in time share the counts evenly,
// and the limit and use of the rules are recorded with them.
func TestHistoryRecordsEachSecond(t *testing.T) {
	g, fc := quietGuard(t,
		core.Rule{Name: "rate", Resource: "GET /a", Kind: core.KindFlow, Limit: 3},
		core.Rule{Name: "conc", Resource: "GET /b", Kind: core.KindConcurrency, Limit: 2},
		core.Rule{Name: "brk", Resource: "GET /c", Kind: core.KindBreaker, Strategy: "error-ratio", Threshold: 0.5,
			MinRequests: 100, Window: 10 * time.Second, OpenFor: time.Second},
	)
	t.Cleanup(func() { _ = g.Close() })
	ctx := context.Background()
	enter := func(resource string, n int) (held []core.Entry) {
		for range n {
			if e, err := g.Enter(ctx, resource); err == nil {
				held = append(held, e)
			}
		}
		return held
	}
	// Requests before the first call of History are not recorded.
	for _, e := range enter("GET /a", 2) {
		e.Exit(nil)
	}
	fc.Advance(500 * time.Millisecond) // 10.5s
	h := g.History(0)
	assert.Equal(t, 10*time.Second, h.End)
	assert.Empty(t, resourceHistory(t, h, "GET /a").Pass, "no second recorded yet")

	// Second (10, 11]: 5 to GET /a (3 pass, the window of 1s began
	// at 10s), one to GET /b held across the second, one failing to GET /c
	// that takes 300ms.
	fc.Advance(500 * time.Millisecond) // 11s
	require.Equal(t, 11*time.Second, g.History(0).End)
	for _, e := range enter("GET /a", 5) {
		e.Exit(nil)
	}
	b := enter("GET /b", 1)
	c := enter("GET /c", 1)
	fc.Advance(300 * time.Millisecond)
	c[0].Exit(fmt.Errorf("failed"))
	fc.Advance(700 * time.Millisecond) // 12s
	h = g.History(0)
	assert.Equal(t, 12*time.Second, h.End)
	assert.Equal(t, []float64{0, 3}, resourceHistory(t, h, "GET /a").Pass, "the seconds ending at 11s and 12s")
	h = g.History(11 * time.Second)
	a := resourceHistory(t, h, "GET /a")
	assert.Equal(t, []float64{3}, a.Pass)
	assert.Equal(t, []float64{2}, a.Block)
	assert.Equal(t, []float64{0}, a.Error)
	assert.Equal(t, []float64{0}, a.AvgRT, "exited on the fake clock at once")
	cr := resourceHistory(t, h, "GET /c")
	assert.Equal(t, []float64{1}, cr.Error)
	assert.Equal(t, []float64{300}, cr.AvgRT)
	assert.Equal(t, []float64{nan}, plain(resourceHistory(t, h, "GET /b").AvgRT), "none completed")
	rate := ruleHistory(t, h, "rate")
	assert.Equal(t, []float64{2}, rate.Blocked)
	assert.Equal(t, []float64{5}, rate.Evaluated)
	assert.Equal(t, []float64{3}, rate.Limit)
	assert.Equal(t, []float64{0}, rate.Use, "the window of a flow rule at 12s: nothing since")
	// The percentiles of one response time of 300ms, alone in its bucket
	// (250ms, 500ms]: the average.
	assert.Equal(t, []float64{300}, cr.P50RT)
	assert.Equal(t, []float64{300}, cr.P99RT)
	assert.Equal(t, []float64{nan}, plain(resourceHistory(t, h, "GET /b").P99RT), "none completed")
	conc := ruleHistory(t, h, "conc")
	assert.Equal(t, []float64{2}, conc.Limit)
	assert.Equal(t, []float64{1}, conc.Use)
	assert.Equal(t, []float64{nan}, plain(ruleHistory(t, h, "brk").Limit))

	// (12, 15] sampled once, late: 9 requests to GET /a at 12s (3 pass)
	// share the 3 seconds; GET /b's request exits.
	for _, e := range enter("GET /a", 9) {
		e.Exit(nil)
	}
	b[0].Exit(nil)
	fc.Advance(3 * time.Second) // 15s
	h = g.History(11 * time.Second)
	assert.Equal(t, 15*time.Second, h.End)
	a = resourceHistory(t, h, "GET /a")
	assert.Equal(t, []float64{3, 1, 1, 1}, a.Pass)
	assert.Equal(t, []float64{2, 2, 2, 2}, a.Block)
	assert.Equal(t, []float64{1, 0, 0, 0}, ruleHistory(t, h, "conc").Use)
	// Only the seconds after a time.
	h = g.History(13*time.Second + 500*time.Millisecond)
	assert.Equal(t, []float64{1, 1}, resourceHistory(t, h, "GET /a").Pass, "the seconds ending at 14s and 15s")
	h = g.History(15 * time.Second)
	assert.Empty(t, resourceHistory(t, h, "GET /a").Pass)

	// A reload: rate keeps its history with its new limit, conc goes, a new
	// rule starts its own.
	require.NoError(t, g.SetRules([]core.Rule{
		{Name: "rate", Resource: "GET /a", Kind: core.KindFlow, Limit: 4},
		{Name: "new", Resource: "GET /a", Kind: core.KindConcurrency, Limit: 9},
	}))
	enter("GET /a", 1)[0].Exit(nil)
	fc.Advance(time.Second) // 16s
	h = g.History(11 * time.Second)
	require.Len(t, h.Rules, 2)
	assert.Equal(t, []float64{3, 3, 3, 3, 4}, ruleHistory(t, h, "rate").Limit)
	assert.Equal(t, []float64{9}, ruleHistory(t, h, "new").Limit)
	assert.Equal(t, []float64{1}, ruleHistory(t, h, "new").Evaluated)
	assert.Equal(t, "new", h.Rules[1].Rule, "in rule order")

	// The use of a flow rule is its window's count when sampled; a shadow
	// rule counts what it would have blocked.
	rule := core.Rule{Name: "shadow-rate", Resource: "GET /a", Kind: core.KindFlow, Limit: 1, Shadow: true}
	require.NoError(t, g.SetRules([]core.Rule{{Name: "rate", Resource: "GET /a", Kind: core.KindFlow, Limit: 4}, rule}))
	fc.Advance(500 * time.Millisecond)
	for _, e := range enter("GET /a", 3) {
		e.Exit(nil)
	}
	fc.Advance(500 * time.Millisecond) // 17s
	h = g.History(16 * time.Second)
	rate = ruleHistory(t, h, "rate")
	assert.Equal(t, []float64{3}, rate.Use)
	assert.Equal(t, []float64{4}, rate.Limit)
	shadow := ruleHistory(t, h, "shadow-rate")
	assert.Equal(t, []float64{2}, shadow.Shadowed)
	assert.Equal(t, []float64{0}, shadow.Blocked)
	assert.Equal(t, []float64{3}, resourceHistory(t, h, "GET /a").Pass)

	// A long silence keeps the last 10 minutes only.
	fc.Advance(time.Hour)
	h = g.History(0)
	a = resourceHistory(t, h, "GET /a")
	require.Equal(t, historySeconds, len(a.Pass))
	assert.Equal(t, h.End, 17*time.Second+time.Hour)
	for _, v := range a.Pass {
		assert.Zero(t, v)
	}
}

// TestHistoryPercentiles checks the percentiles of response times in
// several buckets: interpolated within theirs (history.TestQuantile has a
// table of them).
func TestHistoryPercentiles(t *testing.T) {
	g, fc := quietGuard(t)
	t.Cleanup(func() { _ = g.Close() })
	g.History(0)
	var held []core.Entry
	for range 2 {
		e, err := g.Enter(context.Background(), "GET /d")
		require.NoError(t, err)
		held = append(held, e)
	}
	fc.Advance(time.Millisecond)
	held[0].Exit(nil)
	fc.Advance(299 * time.Millisecond)
	held[1].Exit(nil)
	fc.Advance(700 * time.Millisecond)
	d := resourceHistory(t, g.History(0), "GET /d")
	// 1ms is in (2^-10 s, 2^-9 s], 300ms in (250ms, 500ms]: the median is
	// the top of the first, the 99th percentile 98% into the second.
	assert.InDelta(t, 1000*math.Ldexp(1, -9), d.P50RT[0], 1e-3)
	assert.InDelta(t, 250*math.Pow(2, 0.98), d.P99RT[0], 1e-3)
	assert.Equal(t, []float64{150.5}, d.AvgRT)
}

// TestHistoryResourcesBeyondTheBound checks that resources beyond
// the first 1000 count in the overflow resource's history, so that no
// request is lost from the totals.
func TestHistoryResourcesBeyondTheBound(t *testing.T) {
	g, fc := quietGuard(t)
	t.Cleanup(func() { _ = g.Close() })
	g.History(0)
	const n = historyResources + 50
	for i := range n {
		e, err := g.Enter(context.Background(), fmt.Sprintf("r%04d", i))
		require.NoError(t, err)
		e.Exit(nil)
	}
	fc.Advance(time.Second)
	h := g.History(0)
	require.Equal(t, historyResources+1, len(h.Resources))
	last := h.Resources[len(h.Resources)-1]
	assert.Equal(t, core.OverflowResource, last.Resource)
	assert.Equal(t, []float64{50}, last.Pass)
	var sum float64
	for _, r := range h.Resources {
		sum += r.Pass[0]
	}
	assert.Equal(t, float64(n), sum)
}

// TestHistoryMemoryIsBounded measures the heap a Guard's history takes for
// 1000 resources and 10 rules, once it holds 10 minutes of seconds, and
// that it does not grow as it keeps recording. Not parallel: it reads the
// heap of the process.
func TestHistoryMemoryIsBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("records 11 minutes of a fake clock")
	}
	const resources, rules = 1000, 10
	var rs []core.Rule
	for i := range rules {
		rs = append(rs, core.Rule{Name: fmt.Sprintf("rule-%d", i), Resource: fmt.Sprintf("r%04d", i), Kind: core.KindFlow, Limit: 100})
	}
	g, fc := quietGuard(t, rs...)
	t.Cleanup(func() { _ = g.Close() })
	for i := range resources {
		e, err := g.Enter(context.Background(), fmt.Sprintf("r%04d", i))
		require.NoError(t, err)
		e.Exit(nil)
	}
	heap := func() uint64 {
		runtime.GC()
		runtime.GC() // the pools, emptied over two
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	before := heap()
	g.History(0)
	first := heap()
	// Record more than the history holds, with traffic, sampling every 10
	// seconds (a sample fills the seconds since the previous one: a sample
	// a second, 1000 resources each, took 25 s under -race).
	for s := 0; s < historySeconds+60; s += 10 {
		e, err := g.Enter(context.Background(), fmt.Sprintf("r%04d", s%resources))
		require.NoError(t, err)
		e.Exit(nil)
		fc.Advance(10 * time.Second)
		g.History(fc.Now())
	}
	full := heap()
	h := g.History(0)
	require.Equal(t, resources, len(h.Resources))
	require.Equal(t, historySeconds, len(h.Resources[0].Pass))
	h = core.History{}
	after := heap()
	perSeries := float64(int64(first)-int64(before)) / (resources + rules)
	t.Logf("history of %d resources and %d rules: %d bytes at the first sample, %d once full, %d after reading it all; %.0f bytes per resource or rule",
		resources, rules, int64(first)-int64(before), int64(full)-int64(before), int64(after)-int64(before), perSeries)
	// A resource's ring is 600 seconds of 6 float32 columns, 14400 bytes,
	// about 14850 in its block of rings (see history.Slab); with its
	// track's counters and map entry about 15.5 kB. A rule's is 600 of 5,
	// 12000 bytes.
	const bound = 16_000
	assert.Less(t, perSeries, float64(bound), "bytes per resource or rule")
	assert.Less(t, int64(full)-int64(before), int64(bound*(resources+rules)), "once full")
	assert.Less(t, int64(after)-int64(before), int64(bound*(resources+rules)), "after reading it all")
}

// TestHistoryOfARuleSetAgain checks that a rule removed and set again
// between two samples, whose counts start again, starts a history of its
// own, and that one changed in kind does too, while a rule whose counts
// carry on keeps its history.
func TestHistoryOfARuleSetAgain(t *testing.T) {
	rate := core.Rule{Name: "rate", Resource: "GET /a", Kind: core.KindFlow, Limit: 1}
	g, fc := quietGuard(t, rate)
	t.Cleanup(func() { _ = g.Close() })
	enter := func(n int) {
		for range n {
			if e, err := g.Enter(context.Background(), "GET /a"); err == nil {
				e.Exit(nil)
			}
		}
	}
	g.History(0)
	enter(4) // 1 passes, 3 blocked
	fc.Advance(time.Second)
	assert.Equal(t, []float64{3}, ruleHistory(t, g.History(0), "rate").Blocked)
	require.NoError(t, g.SetRules(nil))
	require.NoError(t, g.SetRules([]core.Rule{rate}))
	enter(2) // 1 passes, 1 blocked
	fc.Advance(time.Second)
	h := g.History(0)
	assert.Equal(t, []float64{1}, ruleHistory(t, h, "rate").Blocked, "a history of its own")
	assert.Equal(t, []float64{2}, ruleHistory(t, h, "rate").Evaluated)

	conc := core.Rule{Name: "rate", Resource: "GET /a", Kind: core.KindConcurrency, Limit: 5}
	require.NoError(t, g.SetRules([]core.Rule{conc}))
	enter(3)
	fc.Advance(time.Second)
	h = g.History(0)
	assert.Equal(t, []float64{3}, ruleHistory(t, h, "rate").Evaluated, "another kind: a history of its own")
	assert.Equal(t, []float64{5}, ruleHistory(t, h, "rate").Limit)
	enter(1)
	fc.Advance(time.Second)
	assert.Equal(t, []float64{3, 1}, ruleHistory(t, g.History(0), "rate").Evaluated, "kept")
}

// BenchmarkHistorySample measures a second of a Guard's history: one
// sample of 1000 resources and 10 rules, as the goroutine takes it each
// second (History samples then reads the seconds after now: none).
func BenchmarkHistorySample(b *testing.B) {
	var rs []core.Rule
	for i := range 10 {
		rs = append(rs, core.Rule{Name: fmt.Sprintf("rule-%d", i), Resource: fmt.Sprintf("r%04d", i), Kind: core.KindFlow, Limit: 100})
	}
	g, fc := quietGuard(b, rs...)
	b.Cleanup(func() { _ = g.Close() })
	for i := range 1000 {
		e, err := g.Enter(context.Background(), fmt.Sprintf("r%04d", i))
		if err != nil {
			b.Fatal(err)
		}
		e.Exit(nil)
	}
	g.History(fc.Now())
	b.ReportAllocs()
	for b.Loop() {
		fc.Advance(time.Second)
		g.History(fc.Now())
	}
}
