package flow

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestWindowNextIsTheNextRetry: an admitted decision of a window algorithm
// (fixed window, sliding log, sliding counter, leap array) that leaves no
// quota tells, as Next, the RetryAfter of a request of one rejected right
// after it, exactly, and a request of one at that time is admitted if
// nothing else arrived; one that leaves quota has Next 0. Random arrivals
// on a fake timeline, warming limits included. Before, these decisions had
// Next 0, and the Guard advertised the whole window on the last admitted
// response while the rejection right after it told the real wait.
func TestWindowNextIsTheNextRetry(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	cfgs := []Config{
		{Algorithm: FixedWindow, Limit: 2, Window: 10 * s},
		{Algorithm: FixedWindow, Limit: 50, Window: s},
		{Algorithm: FixedWindow, Limit: 20, Window: s, Warmup: 10 * s},
		{Algorithm: SlidingLog, Limit: 3, Window: 10 * s},
		{Algorithm: SlidingLog, Limit: 50, Window: s},
		{Algorithm: SlidingCounter, Limit: 2, Window: 10 * s},
		{Algorithm: SlidingCounter, Limit: 7, Window: 1000},
		{Algorithm: SlidingCounter, Limit: 50, Window: s},
		{Algorithm: LeapArray, Limit: 3, Window: 10 * s, Buckets: 10},
		{Algorithm: LeapArray, Limit: 50, Window: s, Buckets: 2},
		{Algorithm: LeapArray, Limit: 20, Window: s, Warmup: 10 * s},
	}
	for _, cfg := range cfgs {
		l := mustNew(t, cfg, nil)
		now, emptied := int64(0), 0
		for i := 0; i < 200_000 && emptied < 200; i++ {
			now += rng.Int64N(2*int64(cfg.Window)/cfg.Limit + 1)
			d := l.Acquire(now, 1)
			if !d.OK || d.Remaining > 0 {
				require.Zero(t, d.Next, "%+v at %d: %+v", cfg, now, d)
				continue
			}
			emptied++
			require.Positive(t, d.Next, "%+v at %d", cfg, now)
			after := l.Acquire(now, 1)
			require.False(t, after.OK, "%+v at %d", cfg, now)
			require.Equal(t, after.RetryAfter, d.Next, "%+v at %d", cfg, now)
			if rng.IntN(2) == 0 {
				now += int64(d.Next)
				next := l.Acquire(now, 1)
				require.True(t, next.OK, "%+v at %d, Next after emptying", cfg, now)
			}
		}
		require.Greater(t, emptied, 20, "%+v", cfg)
	}
}

// TestLeapArrayLeasedNextIsTheNextRetry: TestWindowNextIsTheNextRetry's
// promise for a leap array whose quota CPUs lease (AcquireOn): a CPU takes
// a lease, the rest of the quota goes to others, and the CPU's last leased
// permit, which leaves no quota, tells as Next the RetryAfter of its next
// request.
func TestLeapArrayLeasedNextIsTheNextRetry(t *testing.T) {
	cfg := Config{Algorithm: LeapArray, Limit: 1 << 20, Window: s, Buckets: 10}
	l := mustNew(t, cfg, nil).(*leapArray)
	now := int64(30 * ms)
	first := l.AcquireOn(1, now, 1) // takes a lease
	require.True(t, first.OK)
	leased := first.Remaining - l.Acquire(now, 0).Remaining
	require.Positive(t, leased, "no lease taken")
	fill := l.Acquire(now, first.Remaining-leased) // the window's quota, the lease's aside
	require.True(t, fill.OK)
	var d Decision
	for i := int64(0); i < leased; i++ {
		d = l.AcquireOn(1, now+int64(i), 1)
		require.True(t, d.OK, "leased permit %d", i)
	}
	require.Zero(t, d.Remaining)
	after := l.AcquireOn(1, now+leased-1, 1)
	require.False(t, after.OK)
	require.Positive(t, d.Next)
	require.Equal(t, after.RetryAfter, d.Next)
}
