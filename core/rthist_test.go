package core_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/breaker"
	"github.com/sluicekit/sluice/core/internal/loadtest"
)

// Exit counts each request in the bucket of its response time.
func TestRTHistogram(t *testing.T) {
	g, fc := newGuard(t)
	ctx := context.Background()
	var want core.RTHistogram
	for _, tc := range []struct {
		rt     time.Duration
		bucket int
	}{
		{0, 0}, {5 * time.Microsecond, 0}, {10 * time.Microsecond, 1}, {100 * time.Microsecond, 4},
		{300 * time.Microsecond, 6}, {300 * time.Microsecond, 6}, {time.Millisecond, 8}, {250 * ms, 15},
		{time.Second, 17}, {time.Minute, 23},
	} {
		e, err := g.Enter(ctx, "GET /h")
		require.NoError(t, err)
		fc.Advance(tc.rt)
		e.Exit(nil)
		want[tc.bucket]++
	}
	st, ok := g.Stats("GET /h")
	require.True(t, ok)
	assert.Equal(t, want, st.Total.RTHistogram)
}

// TestResponseTimesTrueOnBusyHost: a Guard with no timing option measures
// a response time on the monotonic clock, as long as the request took,
// with every CPU busy with other goroutines, for its statistics and every
// rule that reads it: a breaker that trips when every request is slower
// than 19ms, the minimum response time of a cpu rule's BBR check (its
// host read as saturated) and of an adaptive rule. Timed on a clock a
// goroutine advanced every millisecond, 20ms requests read 0 to 6ms on a
// busy host: the minimum was under 20ms (0 for BBR, whose bound fell to
// one request at a time), and the breaker stayed closed. Only lower
// bounds: a busy host makes a sleep longer, never shorter.
//
// BBR's minimum is of the last second: the check reads it after each
// request, in a snapshot that the request's end is known to be in (taken
// within systemFresh of a reading of the Guard's clock before Exit). A
// snapshot read once at the end missed every request when the test
// goroutine waited over a second for a CPU, and read 0 (1 of 42 runs of
// the package at nice 19 on a 2-core host at load 10 to 14).
func TestResponseTimesTrueOnBusyHost(t *testing.T) {
	const service, requests = 20 * time.Millisecond, 20
	g, err := core.New(core.WithSystemSource(&fakeSystem{cpu: 1}), core.WithRules(core.Rule{
		Name: "slow", Resource: "GET /busy", Kind: core.KindBreaker, Strategy: breaker.SlowRatio,
		Threshold: 1, MaxRT: service - time.Millisecond, MinRequests: requests, Window: time.Minute,
	}, core.Rule{
		Name: "bbr", Resource: "GET /busy", Kind: core.KindSystem, Signal: core.SignalCPU, Threshold: 0.8, Strategy: core.StrategyBBR,
	}, core.Rule{
		Name: "adaptive", Resource: "GET /busy", Kind: core.KindAdaptive,
	}))
	require.NoError(t, err)
	defer g.Close()
	loadtest.Saturate(t, 4)
	ctx := context.Background()
	var real time.Duration = math.MaxInt64
	bbrRead := 0
	for i := range requests {
		e, err := g.Enter(ctx, "GET /busy")
		require.NoError(t, err, "every request is slow: the breaker trips only after the last")
		start := time.Now()
		time.Sleep(service)
		real = min(real, time.Since(start))
		before := g.Clock().Now()
		e.Exit(nil)
		if s := g.Snapshot(); s.At-before <= systemFresh {
			bbrRead++
			assert.GreaterOrEqual(t, s.Rules[1].System.MinRT, service, "BBR's minimum response time after request %d", i)
		}
	}
	st, ok := g.Stats("GET /busy")
	require.True(t, ok)
	t.Logf("shortest: %s real, %s read in the last second; average %s", real, st.MinRT, st.Total.RT/time.Duration(st.Total.Complete))
	if st.Complete > 0 {
		assert.GreaterOrEqual(t, st.MinRT, service, "the shortest response time of the last second")
	}
	var under int64
	for i := range rtBucketOf(service) {
		under += st.Total.RTHistogram[i]
	}
	assert.Zero(t, under, "requests counted under %s: %v", service, st.Total.RTHistogram)
	rules := g.Snapshot().Rules
	require.Len(t, rules, 3)
	t.Logf("BBR's minimum read after %d of %d requests; the adaptive rule's %s", bbrRead, requests, rules[2].Adaptive.MinRT)
	assert.GreaterOrEqual(t, rules[2].Adaptive.MinRT, service, "the adaptive rule's")
	_, err = g.Enter(ctx, "GET /busy")
	assert.ErrorIs(t, err, core.ErrBlocked, "all %d requests were slow: the breaker is open", requests)
}

// systemFresh is how recent a request's end must be to count in a system
// rule's statistics of the last second, kept in buckets of a tenth of a
// second: a second less one bucket.
const systemFresh = 900 * time.Millisecond

// rtBucketOf returns the RTHistogram bucket that counts rt.
func rtBucketOf(rt time.Duration) int {
	i := 0
	for time.Duration(float64(time.Second)*math.Ldexp(1, i-17)) < rt {
		i++
	}
	return i
}
