package flow

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestNextIsTheNextRetry: an admitted bucket decision that leaves no quota
// tells, as Next, the RetryAfter of a request of one rejected right after
// it, exactly, and a request of one at that time is admitted; one that
// leaves quota has Next 0. Token and leaky buckets, with and without burst
// or MaxWait, at rates whose cost has a fraction of a nanosecond, through
// DecideAt (hotspot buckets) and through the flow Limiters. Before, no decision told it: an emptied bucket's last
// admission advertised the time to refill it whole.
func TestNextIsTheNextRetry(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	cfgs := []Config{
		{Algorithm: TokenBucket, Limit: 2, Window: 10 * s},
		{Algorithm: TokenBucket, Limit: 3, Window: s, Burst: 2},
		{Algorithm: TokenBucket, Limit: 7, Window: 1000},
		{Algorithm: TokenBucket, Limit: 100_000, Window: s},
		{Algorithm: LeakyBucket, Limit: 2, Window: 10 * s, MaxWait: 2 * s},
		{Algorithm: LeakyBucket, Limit: 3, Window: s},
		{Algorithm: LeakyBucket, Limit: 7, Window: 1000, MaxWait: 500},
	}
	for _, cfg := range cfgs {
		g := GCRA{Limit: cfg.Limit, Window: cfg.Window, Burst: cfg.Burst, MaxWait: cfg.MaxWait, Queue: cfg.Algorithm == LeakyBucket}.Prepare()
		var tat Instant
		now := int64(0)
		emptied := 0
		for i := 0; i < 400_000 && emptied < 100; i++ {
			now += rng.Int64N(int64(cfg.Window)/cfg.Limit/2 + 1)
			var d Decision
			tat = g.DecideAt(&d, tat, now, 1, true)
			if !d.OK {
				continue
			}
			if d.Remaining > 0 {
				require.Zero(t, d.Next, "%+v at %d: quota left", cfg, now)
				continue
			}
			emptied++
			require.Positive(t, d.Next, "%+v at %d", cfg, now)
			var after Decision
			g.DecideAt(&after, tat, now, 1, true)
			require.False(t, after.OK, "%+v at %d", cfg, now)
			require.Equal(t, after.RetryAfter, d.Next, "%+v at %d", cfg, now)
			g.DecideAt(&after, tat, now+int64(d.Next), 1, true)
			require.True(t, after.OK, "%+v at %d + Next", cfg, now)
		}
		require.Positive(t, emptied, "%+v", cfg)

		// The same through a Limiter.
		l := mustNew(t, cfg, nil)
		now, emptied = 0, 0
		for i := 0; i < 400_000 && emptied < 100; i++ {
			now += rng.Int64N(int64(cfg.Window)/cfg.Limit/2 + 1)
			d := l.Acquire(now, 1)
			if !d.OK || d.Remaining > 0 {
				require.Zero(t, d.Next, "%+v at %d", cfg, now)
				continue
			}
			emptied++
			after := l.Acquire(now, 1)
			require.False(t, after.OK, "%+v at %d", cfg, now)
			require.Equal(t, after.RetryAfter, d.Next, "%+v at %d", cfg, now)
		}
		require.Positive(t, emptied, "%+v", cfg)
	}
}
