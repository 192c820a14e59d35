package throttle_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core/throttle"
)

// TestIdleResourcesMakeRoom: resources beyond WithMaxResources share one
// count, so that a flood of names cannot grow memory. The resources counted
// apart were those first seen, for ever: a program calling many upstreams
// over time (a webhook sender, one resource per customer's host) had every
// upstream after the first 1024 in the shared count, where one failing
// upstream's Retry-After paused calls to all the others. A resource with
// nothing in its window and no pause is as a new one: it now makes room.
func TestIdleResourcesMakeRoom(t *testing.T) {
	th, fc := newThrottle(t, throttle.WithMaxResources(2))
	for _, r := range []string{"old-1", "old-2"} { // seen once, long ago
		require.NoError(t, th.Allow(r))
		th.Record(r, true, 0)
	}
	fc.Advance(time.Hour)

	for range 3 { // one upstream fails, asking to retry in a minute
		th.Record("failing", false, time.Minute)
	}
	var e *throttle.Error
	require.ErrorAs(t, th.Allow("failing"), &e)
	assert.Equal(t, time.Minute, e.RetryAfter, "paused")
	for i := range 10 {
		r := fmt.Sprint("healthy-", i)
		assert.NoError(t, th.Allow(r), "%s: another upstream is not paused", r)
	}

	// Active resources keep their counts: two at once fill the bound.
	th, fc = newThrottle(t, throttle.WithMaxResources(2))
	for _, r := range []string{"a", "b"} {
		require.NoError(t, th.Allow(r))
		th.Record(r, false, 0)
	}
	fc.Advance(time.Second)
	assert.InDelta(t, 1/1.5, th.Share("a"), 1e-12, "a keeps its count")
	assert.Zero(t, th.Share("c"), "c shares the overflow's count: nothing in it yet")
}
