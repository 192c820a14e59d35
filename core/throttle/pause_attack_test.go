package throttle_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestOneUsersRetryAfterPausesNoOneElse: an upstream with per-user limits
// answers one call in 100 (a hostile user's) 429 Retry-After: 60 and
// accepts the rest, 100 calls/s for a minute. The other users' calls are
// all sent; a pause on the first 429 had sent none of the 5,940.
func TestOneUsersRetryAfterPausesNoOneElse(t *testing.T) {
	th, fc := newThrottle(t)
	for range 100 { // a healthy history
		require.NoError(t, th.Allow("up"))
		th.Record("up", true, 0)
		fc.Advance(10 * time.Millisecond)
	}
	sent, others := 0, 0
	for i := range 6000 {
		hostile := i%100 == 0
		if !hostile {
			others++
		}
		if th.Allow("up") == nil {
			if !hostile {
				sent++
			}
			var retry time.Duration
			if hostile {
				retry = time.Minute
			}
			th.Record("up", !hostile, retry)
		}
		fc.Advance(10 * time.Millisecond)
	}
	assert.Equal(t, others, sent, "every other user's call is sent")

	// An upstream that rejects the calls themselves is paused as it asks,
	// from the third rejection in a row after a healthy history.
	for i := range 3 {
		require.NoError(t, th.Allow("up"), "rejection %d", i)
		th.Record("up", false, time.Minute)
	}
	fc.Advance(20 * time.Second)
	err := th.Allow("up")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "retry after 40s")
}
