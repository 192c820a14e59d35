package engine

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The benchmarks of this file measure sluice's controllers against real
// time, over loopback, on a backend that sleeps: what they measure depends
// on how busy the machine is, so they are no tests (CI runs no
// benchmark). Each iteration is one measurement; each reports its figures
// and fails when they miss the bounds below, which an idle machine keeps:
//
//	go test -C examples -run x -bench . -benchtime 1x ./overload/engine/
//
// What must hold whatever the machine is checked on the fake clock: core's
// TestPriorityUnderOverload and TestPriorityKeepsGoodputAtSmallLimits (levels),
// package adaptive's TestLimitSettlesNearTheBackendsConcurrency (the limit
// after a slowdown) and TestAdaptiveProbesRefuseLittle.

// quick is a short measurement of a backend of 50 requests/s, a load the
// race detector's slower HTTP serves on a busy machine, with enough warmup
// for the adaptive rule to find its limit.
var quick = config{workers: 5, service: 100 * time.Millisecond, deadline: time.Second, warmup: 3 * time.Second, duration: 3 * time.Second}

// report reports r's figures as the benchmark's metrics, named after what.
func report(b *testing.B, what string, r summary) {
	b.ReportMetric(r.goodput, what+"-goodput/s")
	b.ReportMetric(r.rejected, what+"-rejected")
	b.ReportMetric(r.timedOut, what+"-timedout")
	b.ReportMetric(float64(r.p99)/float64(time.Millisecond), what+"-p99-ms")
}

// BenchmarkAdaptiveKeepsGoodput drives the backend at 5x its capacity:
// with no protection the queue grows until most requests time out in it;
// the adaptive rule sheds most requests and keeps the backend serving the
// others in time.
func BenchmarkAdaptiveKeepsGoodput(b *testing.B) {
	ctx := context.Background()
	for b.Loop() {
		none, err := quick.measure(ctx, "none", 5)
		require.NoError(b, err)
		adaptive, err := quick.measure(ctx, "adaptive", 5)
		require.NoError(b, err)
		report(b, "none", none.summary)
		report(b, "adaptive", adaptive.summary)

		assert.Less(b, none.goodput, 0.3*none.capacity, "with no protection, requests time out in the queue")
		assert.Greater(b, none.timedOut, 0.5)
		assert.Zero(b, none.rejected)
		assert.Greater(b, adaptive.goodput, 0.5*adaptive.capacity, "the adaptive rule keeps the backend serving")
		assert.Greater(b, adaptive.goodput, 2*none.goodput)
		assert.Greater(b, adaptive.rejected, 0.5, "by shedding most of 5x the capacity")
		assert.Less(b, adaptive.timedOut, 0.05, "what it admits is served in time")
		assert.Less(b, adaptive.p99, quick.deadline, "within the deadline")
		assert.Positive(b, adaptive.limit)
	}
}

// levels measures protect at 3x the capacity, critical requests at half
// of it, and returns the critical and the sheddable rows.
func levels(b *testing.B, protect string) (high, low leveledRow) {
	b.Helper()
	rows, err := quick.measureLevels(context.Background(), protect)
	require.NoError(b, err)
	require.Len(b, rows, 2)
	report(b, "critical", rows[0].summary)
	report(b, "sheddable", rows[1].summary)
	return rows[0], rows[1]
}

// BenchmarkAdaptiveShedsTheLowerLevelFirst drives the backend at 3x its
// capacity, critical requests at half of it: the adaptive rule sheds the
// sheddable ones and serves almost every critical one.
func BenchmarkAdaptiveShedsTheLowerLevelFirst(b *testing.B) {
	for b.Loop() {
		high, low := levels(b, "adaptive")
		assert.Greater(b, high.succeeded, 0.9, "critical requests are served")
		assert.Greater(b, low.rejected, 0.6, "sheddable ones are shed")
		assert.Greater(b, high.succeeded, 2*low.succeeded)
	}
}

// BenchmarkSystemRTHoldsTheServiceBusy drives the backend at 3x its
// capacity, critical requests at half of it, under the system-rt rule (rt
// at twice the service time): it sheds the sheddable ones and keeps the
// backend serving in time, critical ones first.
func BenchmarkSystemRTHoldsTheServiceBusy(b *testing.B) {
	for b.Loop() {
		high, low := levels(b, "system-rt")
		capacity := float64(quick.workers) / quick.service.Seconds()
		assert.Greater(b, high.succeeded, 0.9, "critical requests are served")
		assert.Greater(b, low.rejected, 0.6, "sheddable ones are shed")
		assert.Greater(b, high.goodput+low.goodput, 0.5*capacity, "the backend keeps serving")
		assert.Less(b, high.timedOut+low.timedOut, 0.05, "what it admits is served in time")
	}
}

// BenchmarkAdaptiveLimitSettlesAfterASlowdown runs the adaptive rule at 2x
// the capacity while the backend becomes 2x slower: the limit settles
// (stays within its final range) within 5s on a quiet machine, 8s
// allowed, and the backend serves at least 60% of its new capacity in the
// end. It takes 20s.
func BenchmarkAdaptiveLimitSettlesAfterASlowdown(b *testing.B) {
	c := quick
	c.duration = 12 * time.Second
	for b.Loop() {
		r, err := c.measureSlowdown(context.Background())
		require.NoError(b, err)
		b.Logf("limit per %v: %v (slower from window %d); settled after %v in %d-%d", settleWindow, r.windows, r.first, r.settle, r.lo, r.hi)
		b.ReportMetric(r.settle.Seconds(), "settle-s")
		report(b, "late", r.late)
		require.GreaterOrEqual(b, r.settle, time.Duration(0), "settled")
		assert.LessOrEqual(b, r.settle, 8*time.Second)
		capacity := float64(c.workers) / c.service.Seconds()
		assert.Greater(b, r.late.goodput, 0.6*capacity/2)
		assert.Less(b, r.late.timedOut, 0.05)
	}
}
