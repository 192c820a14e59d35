package main

import (
	"bytes"
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// quick is a short measurement of a backend of 50 requests/s, a load the
// race detector's slower HTTP serves on a busy machine, with enough warmup
// for the adaptive rule to find its limit.
var quick = config{workers: 5, service: 100 * time.Millisecond, deadline: time.Second, warmup: 3 * time.Second, duration: 3 * time.Second}

// TestAdaptiveKeepsGoodputWhereNoneCollapses drives the backend at 5x its
// capacity: with no protection the queue grows until most requests time
// out in it; the adaptive rule sheds most requests and keeps the backend
// serving the others in time. The bounds are loose (a loaded machine
// serves less than the capacity): what they tell is the difference.
func TestAdaptiveKeepsGoodputWhereNoneCollapses(t *testing.T) {
	ctx := context.Background()
	none, err := quick.measure(ctx, "none", 5)
	require.NoError(t, err)
	adaptive, err := quick.measure(ctx, "adaptive", 5)
	require.NoError(t, err)
	t.Logf("none: %+v", none)
	t.Logf("adaptive: %+v", adaptive)

	assert.Less(t, none.goodput, 0.3*none.capacity, "with no protection, requests time out in the queue")
	assert.Greater(t, none.timedOut, 0.5)
	assert.Zero(t, none.rejected)

	assert.Greater(t, adaptive.goodput, 0.5*adaptive.capacity, "the adaptive rule keeps the backend serving")
	assert.Greater(t, adaptive.goodput, 2*none.goodput)
	assert.Greater(t, adaptive.rejected, 0.5, "by shedding most of 5x the capacity")
	assert.Less(t, adaptive.timedOut, 0.05, "what it admits is served in time")
	assert.Less(t, adaptive.p99, quick.deadline, "within the deadline")
	assert.Positive(t, adaptive.limit)
}

// levels measures protect at 3x the capacity, critical requests at half of
// it, and returns the critical and the sheddable rows.
func levels(t *testing.T, protect string) (high, low leveledRow) {
	t.Helper()
	rows, err := quick.measureLevels(context.Background(), protect)
	require.NoError(t, err)
	require.Len(t, rows, 2)
	t.Logf("critical: %+v", rows[0])
	t.Logf("sheddable: %+v", rows[1])
	return rows[0], rows[1]
}

// TestAdaptiveShedsTheLowerLevelFirst drives the backend at 3x its
// capacity, critical requests at half of it: the adaptive rule sheds the
// sheddable ones and serves almost every critical one.
func TestAdaptiveShedsTheLowerLevelFirst(t *testing.T) {
	high, low := levels(t, "adaptive")
	assert.Greater(t, high.succeeded, 0.9, "critical requests are served")
	assert.Greater(t, low.rejected, 0.6, "sheddable ones are shed")
	assert.Greater(t, high.succeeded, 2*low.succeeded)
}

// TestSystemRTHoldsTheServiceBusy drives the backend at 3x its capacity,
// critical requests at half of it, under the system-rt rule (rt at twice
// the service time): it sheds the sheddable ones and keeps the backend
// serving in time, critical ones first. Shedding everything while the
// average is over the threshold served an eighth of each.
func TestSystemRTHoldsTheServiceBusy(t *testing.T) {
	high, low := levels(t, "system-rt")
	capacity := float64(quick.workers) / quick.service.Seconds()
	assert.Greater(t, high.succeeded, 0.9, "critical requests are served")
	assert.Greater(t, low.rejected, 0.6, "sheddable ones are shed")
	assert.Greater(t, high.goodput+low.goodput, 0.5*capacity, "the backend keeps serving")
	assert.Less(t, high.timedOut+low.timedOut, 0.05, "what it admits is served in time")
}

func TestRunPrintsATable(t *testing.T) {
	var out bytes.Buffer
	err := run(context.Background(), []string{"-warmup=0s", "-duration=1s", "-load=2", "-protect=static,adaptive", "-slowdown=false"}, &out)
	require.NoError(t, err)
	for _, want := range []string{"backend: 10 workers x 50ms = 200 requests/s", "unloaded (0.5x", "goodput/s", "static    2x", "adaptive    2x", "adaptive   critical", "adaptive  sheddable"} {
		assert.Contains(t, out.String(), want)
	}
}

func TestFlagErrors(t *testing.T) {
	for _, tc := range []struct{ args, want string }{
		{"-workers=0", "-workers must be >= 1, got 0"},
		{"-load=2,x", `-load: "x" is not a positive number`},
		{"-load=0", `-load: "0" is not a positive number`},
		{"-protect=adaptive,magic", `-protect: unknown protection "magic" (known: none, static, adaptive, system, system-rt)`},
		{"-duration=0s", "must be > 0"},
		{"-backend=gpu", `-backend: unknown backend "gpu" (known: sleep, cpu)`},
	} {
		_, err := parse([]string{tc.args}, &bytes.Buffer{})
		assert.ErrorContains(t, err, tc.want, tc.args)
	}
}

// TestAdaptiveLimitSettlesAfterASlowdown runs the adaptive rule at 2x the
// capacity while the backend becomes 2x slower: the limit settles (stays
// within its final range) within 5s on a quiet machine; the test allows
// 8s, and that the backend serves at least 60% of its new capacity in
// the end. Not in short mode: it takes 20s and depends on timing.
func TestAdaptiveLimitSettlesAfterASlowdown(t *testing.T) {
	if testing.Short() {
		t.Skip("20s, timing-dependent")
	}
	c := quick
	c.duration = 12 * time.Second
	r, err := c.measureSlowdown(context.Background())
	require.NoError(t, err)
	t.Logf("limit per %v: %v (slower from window %d); settled after %v in %d-%d", settleWindow, r.windows, r.first, r.settle, r.lo, r.hi)
	require.GreaterOrEqual(t, r.settle, time.Duration(0), "settled")
	assert.LessOrEqual(t, r.settle, 8*time.Second)
	capacity := float64(c.workers) / c.service.Seconds()
	assert.Greater(t, r.late.goodput, 0.6*capacity/2)
	assert.Less(t, r.late.timedOut, 0.05)
}

func TestSettled(t *testing.T) {
	for _, tc := range []struct {
		name    string
		windows []int64
		first   int
		want    time.Duration
		lo, hi  int64
	}{
		{"at once", []int64{10, 10, 10, 10, 10, 10}, 2, 0, 10, 10},
		{"after a dip", []int64{10, 10, 4, 6, 9, 10, 11, 10, 9, 10}, 2, 2 * settleWindow, 9, 11},
		{"a probe's dip is out of range", []int64{10, 10, 10, 4, 10, 10, 10, 10, 10, 10}, 0, 4 * settleWindow, 10, 10},
		{"within 10% of the range", []int64{20, 8, 9, 10, 11, 10}, 0, 2 * settleWindow, 10, 11},
	} {
		got, lo, hi := settled(tc.windows, tc.first)
		assert.Equal(t, tc.want, got, tc.name)
		assert.Equal(t, []int64{tc.lo, tc.hi}, []int64{lo, hi}, tc.name)
	}
}

func TestCPUBackendHasAWorkerPerCPU(t *testing.T) {
	c, err := parse([]string{"-backend=cpu"}, &bytes.Buffer{})
	require.NoError(t, err)
	assert.Equal(t, runtime.GOMAXPROCS(0), c.workers)
	c, err = parse([]string{"-backend=cpu", "-workers=3"}, &bytes.Buffer{})
	require.NoError(t, err)
	assert.Equal(t, 3, c.workers)
	c, err = parse(nil, &bytes.Buffer{})
	require.NoError(t, err)
	assert.Equal(t, 10, c.workers)
}

// TestRunCPUBackend runs the cpu backend; it measures the capacity first
// and busies every CPU for about 10s: not in short mode.
func TestRunCPUBackend(t *testing.T) {
	if testing.Short() {
		t.Skip("10s of every CPU")
	}
	var out bytes.Buffer
	err := run(context.Background(), []string{"-backend=cpu", "-warmup=0s", "-duration=1s", "-load=2", "-protect=static,system", "-slowdown=false", "-priority=false"}, &out)
	require.NoError(t, err)
	t.Log(out.String())
	for _, want := range []string{"backend: cpu, ", "rounds of SHA-256", "capacity, measured closed loop", "static    2x", "system    2x"} {
		assert.Contains(t, out.String(), want)
	}
}

// TestCalibrate checks that the work scales with the time asked for. The
// scaling is checked on given probe timings: two calibrations time the
// probe apart, and a busy host can slow every probe of one of them.
func TestCalibrate(t *testing.T) {
	assert.Positive(t, calibrate(time.Millisecond))
	for _, probe := range []time.Duration{time.Microsecond, 2 * time.Millisecond, 70 * time.Millisecond} {
		short, long := scaleRounds(time.Millisecond, probe), scaleRounds(100*time.Millisecond, probe)
		assert.Positive(t, short, probe)
		assert.InDelta(t, 100*short, long, 100, "probe %s: %d and %d rounds", probe, short, long)
	}
	assert.Equal(t, int64(probeRounds), scaleRounds(time.Second, time.Second))
	assert.Equal(t, int64(1), scaleRounds(time.Nanosecond, time.Second), "at least one")
}
