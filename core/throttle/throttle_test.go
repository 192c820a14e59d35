package throttle_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/clock"
	"github.com/sluicekit/sluice/core/throttle"
)

func half() float64 { return 0.5 }

func newThrottle(t *testing.T, opts ...throttle.Option) (*throttle.Throttle, *clock.Fake) {
	t.Helper()
	fc := clock.NewFake(0)
	th, err := throttle.New(fc, append([]throttle.Option{throttle.WithRandom(half)}, opts...)...)
	require.NoError(t, err)
	return th, fc
}

// TestProbability checks the rejection probability against the formula,
// call by call, with a random number of 0.5: a call is rejected when
// (requests - K·accepts) / (requests + 1) > 0.5, requests counting the
// earlier attempts.
func TestProbability(t *testing.T) {
	th, _ := newThrottle(t)
	// The upstream rejects everything: calls 1 and 2 go (p = 0, then
	// 1/2), call 3 is rejected (p = 2/3), and so is every later one.
	var got []bool
	for range 6 {
		err := th.Allow("up")
		got = append(got, err == nil)
		if err == nil {
			th.Record("up", false, 0)
		} else {
			var e *throttle.Error
			require.ErrorAs(t, err, &e)
			assert.True(t, errors.Is(err, core.ErrBlocked))
			assert.Greater(t, e.Probability, 0.5)
			assert.Zero(t, e.RetryAfter)
		}
	}
	assert.Equal(t, []bool{true, true, false, false, false, false}, got)

	// An upstream that accepts everything is never throttled, and one that
	// accepts half of the calls is not either with K = 2.
	th, _ = newThrottle(t)
	for i := range 1000 {
		require.NoError(t, th.Allow("ok"))
		th.Record("ok", true, 0)
		require.NoError(t, th.Allow("half"))
		th.Record("half", i%2 == 0, 0)
	}

	// With K = 1, one accepted call in three: after 99 attempts and 33
	// accepts, p = (99-33)/100 = 0.66 > 0.5.
	th, _ = newThrottle(t, throttle.WithK(1))
	for i := range 99 {
		if th.Allow("third") == nil {
			th.Record("third", i%3 == 0, 0)
		}
	}
	assert.Error(t, th.Allow("third"))
}

// TestWindowSlides: counts older than the window no longer count, bucket
// by bucket.
func TestWindowSlides(t *testing.T) {
	th, fc := newThrottle(t, throttle.WithWindow(10*time.Second))
	for range 10 {
		if th.Allow("up") == nil {
			th.Record("up", false, 0)
		}
	}
	require.Error(t, th.Allow("up"))
	fc.Advance(9 * time.Second)
	for range 3 {
		require.Error(t, th.Allow("up"), "the first second's calls still count")
	}
	fc.Advance(1500 * time.Millisecond) // 10.5s: the first bucket [0,1s) has left the window
	assert.Error(t, th.Allow("up"), "the 3 calls of 9s still count: p = 3/4")
	fc.Advance(10 * time.Second)
	assert.NoError(t, th.Allow("up"), "nothing counts any more")
}

// TestPause: an upstream's retry time pauses the resource, capped, without
// counting the calls it rejects.
func TestPause(t *testing.T) {
	th, fc := newThrottle(t, throttle.WithMaxPause(time.Minute))
	require.NoError(t, th.Allow("up"))
	th.Record("up", false, 30*time.Second)
	fc.Advance(10 * time.Second)
	err := th.Allow("up")
	var e *throttle.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, 20*time.Second, e.RetryAfter)
	assert.Equal(t, "sluice: up throttled by the client: the upstream asked to retry after 20s", err.Error())
	assert.NoError(t, th.Allow("other"), "other resources are not paused")
	fc.Advance(20 * time.Second)
	require.NoError(t, th.Allow("up"), "the pause is over; the paused calls were not counted (p = 1/2)")
	th.Record("up", true, time.Hour)
	fc.Advance(time.Minute - time.Nanosecond)
	require.Error(t, th.Allow("up"))
	fc.Advance(time.Nanosecond)
	require.NoError(t, th.Allow("up"), "a pause is at most WithMaxPause")
}

// TestResourceFlood: resources beyond the bound share one count, so a
// program naming endless resources keeps bounded memory.
func TestResourceFlood(t *testing.T) {
	th, _ := newThrottle(t, throttle.WithMaxResources(2))
	for i := range 100_000 {
		r := fmt.Sprint("r", i)
		if th.Allow(r) == nil {
			th.Record(r, false, 0)
		}
	}
	assert.Error(t, th.Allow("r99"), "the overflow share is throttled")
	assert.NoError(t, th.Allow("r0"), "r0 has its own count")
}

func TestOptions(t *testing.T) {
	fc := clock.NewFake(0)
	for _, tc := range []struct {
		opt  throttle.Option
		want string
	}{
		{throttle.WithK(0.5), "WithK: must be between 1 and 1e6, got 0.5"},
		{throttle.WithWindow(time.Millisecond), "WithWindow: must be between 10ms and 24h, got 1ms"},
		{throttle.WithMaxPause(-1), "WithMaxPause: must be >= 0, got -1ns"},
		{throttle.WithMaxResources(0), "WithMaxResources: must be >= 1, got 0"},
		{nil, "nil option"},
	} {
		_, err := throttle.New(fc, tc.opt)
		assert.ErrorContains(t, err, tc.want)
	}
	// Without a clock, the system's: a pause's time left runs in real time.
	th, err := throttle.New(nil, throttle.WithMaxPause(time.Hour))
	require.NoError(t, err)
	th.Record("up", false, time.Hour)
	time.Sleep(time.Millisecond)
	var e *throttle.Error
	require.ErrorAs(t, th.Allow("up"), &e)
	assert.Greater(t, e.RetryAfter, time.Duration(0))
	assert.LessOrEqual(t, e.RetryAfter, time.Hour-time.Millisecond)
}
