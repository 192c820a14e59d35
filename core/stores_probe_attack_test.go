package core

import (
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core/clock"
	"github.com/sluicekit/sluice/core/store"
)

// TestStoreProbeWithinHostLagRecovers opens an exact breaker, then lets
// its probe answer 1ns over the budget on a host that runs late (the
// budget is judged net of the host's lag, which the naps of a lagWatch
// measure; here late by 1ms): the probe is not too slow, so the breaker
// closes, and the requests after it call the store again. Before the fix,
// such a probe neither opened nor closed the breaker: it stayed claimed by
// a probe (inProbe) that had ended, and every later request applied the
// failure policy for good.
func TestStoreProbeWithinHostLagRecovers(t *testing.T) {
	c := clock.NewFake(time.Hour)
	rp := newReporter(func() time.Duration { return c.Now() }, slog.New(slog.DiscardHandler), nil)
	t.Cleanup(rp.stop)
	const budget, backoff = int64(20 * time.Millisecond), int64(time.Second)
	b := &storeHealth{store: "redis", mode: store.Exact, backoff: backoff, trip: 1, budget: budget, clock: c, lag: playedLag(c, 1), reporter: rp}
	b.openUntil.Store(healthy)

	round, ok := b.allow(int64(c.Now()))
	require.True(t, ok)
	b.failed(int64(c.Now()), round, errors.New("down"))
	require.NotEqual(t, int64(healthy), b.openUntil.Load(), "one failure trips a breaker of trip 1")

	c.Advance(time.Duration(backoff))
	round, ok = b.allow(int64(c.Now()))
	require.True(t, ok, "a probe after the backoff")
	require.Equal(t, int64(probing), round)
	start := int64(c.Now())
	c.Advance(time.Duration(budget + 1)) // over the budget by less than the host's lag
	b.lag.saw(int64(c.Now()), int64(time.Millisecond))
	b.succeeded(start, round)
	assert.Equal(t, int64(healthy), b.openUntil.Load(), "a probe within the budget net of the host's lag closes the breaker")
	c.Advance(time.Duration(backoff))
	_, ok = b.allow(int64(c.Now()))
	assert.True(t, ok, "a request after the probe calls the store")
}
