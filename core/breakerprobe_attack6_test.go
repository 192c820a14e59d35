package core_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/breaker"
	"github.com/sluicekit/sluice/core/clock"
)

// TestBreakerProbeRetakenHasItsOwnTime: a half-open breaker gives a probe
// OpenFor to finish. A probe that another rule rejected gives its place
// back, and the request that takes the place later is a probe of its own,
// with OpenFor of its own. It had only what was left of the first one's:
// a request 5s after the breaker went half-open reopened it ("probe did
// not complete within 5s") while the probe in flight was 200ms old, and
// the service was refused for 5s more although the probe then succeeded.
func TestBreakerProbeRetakenHasItsOwnTime(t *testing.T) {
	fc := clock.NewFake(time.Hour)
	g, err := core.New(core.WithClock(fc),
		core.WithRules(
			core.Rule{Name: "b", Resource: "r", Kind: core.KindBreaker, Strategy: breaker.ErrorCount, Threshold: 1,
				MinRequests: 1, OpenFor: 5 * time.Second},
			core.Rule{Name: "c", Resource: "*", Kind: core.KindConcurrency, Limit: 1})) // one slot for r and other
	require.NoError(t, err)
	defer g.Close()
	ctx := context.Background()

	require.NoError(t, call(g, fc, "r", 0, errFailed))
	require.Equal(t, breaker.Open, breakerState(t, g))
	fc.Advance(5 * time.Second)

	other, err := g.Enter(ctx, "other") // holds the one slot
	require.NoError(t, err)
	_, err = g.Enter(ctx, "r")
	require.Error(t, err, "the probe, rejected by the concurrency rule")
	var b *core.BlockedError
	require.ErrorAs(t, err, &b)
	require.Equal(t, "c", b.Rule)
	other.Exit(nil)
	require.Equal(t, breaker.HalfOpen, breakerState(t, g), "the probe's place given back")

	fc.Advance(4900 * time.Millisecond)
	probe, err := g.Enter(ctx, "r")
	require.NoError(t, err, "the place given back: a new probe")
	fc.Advance(200 * time.Millisecond) // 5.1s after half-open, 200ms after the probe

	_, err = g.Enter(ctx, "r")
	require.Error(t, err, "one probe at a time")
	require.ErrorAs(t, err, &b)
	assert.Equal(t, "b", b.Rule)
	assert.Equal(t, breaker.HalfOpen, breakerState(t, g), "the probe in flight has 4.8s left")
	probe.Exit(nil)
	assert.Equal(t, breaker.Closed, breakerState(t, g), "the probe succeeded")
	assert.NoError(t, call(g, fc, "r", 0, nil))

	// A probe that does not finish within OpenFor of its own still
	// reopens the breaker.
	require.NoError(t, call(g, fc, "r", 0, errFailed))
	fc.Advance(5 * time.Second)
	stuck, err := g.Enter(ctx, "r")
	require.NoError(t, err)
	fc.Advance(5 * time.Second)
	_, err = g.Enter(ctx, "r")
	require.Error(t, err)
	assert.Equal(t, breaker.Open, breakerState(t, g), "the probe took OpenFor")
	stuck.Exit(nil)
	assert.Equal(t, breaker.Open, breakerState(t, g), "a probe of an earlier half-open period counts for nothing")
}
