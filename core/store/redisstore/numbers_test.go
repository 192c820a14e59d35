package redisstore

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core/store"
)

// TestRedisNumbersAtTheEdges: in a real Redis, limits at the largest values
// the rules accept are honoured (a burst that takes 52 days to refill, the
// longest window and wait, the largest count), a request that can never
// fit is rejected without disturbing the count however large its n, and
// values beyond are refused with the largest allowed. Before, burst 1000000
// on 2 per 24h was accepted and then every request was rejected (the
// capacity overflowed int64). The limits refill far slower than the test
// runs: Redis's own clock moving on changes nothing.
func TestRedisNumbersAtTheEdges(t *testing.T) {
	st, _ := newTestStore(t, sharedServer(t), WithTimeout(2*time.Second))
	ctx := context.Background()
	day := 24 * time.Hour

	t.Run("refused", func(t *testing.T) {
		for _, tc := range []struct {
			lim  store.Limit
			want string
		}{
			{store.Limit{Algorithm: store.TokenBucket, Limit: 2, Window: day, Burst: 1_000_000}, "burst must be <= 102 "},
			{store.Limit{Algorithm: store.TokenBucket, Limit: int64(time.Second), Window: time.Second, Burst: math.MaxInt64 - int64(time.Second)}, "burst must be <= 4503598627370496 "},
			{store.Limit{Algorithm: store.SlidingCounter, Limit: math.MaxInt64, Window: time.Second}, "limit must be <= 4503599627370496"},
			// Whole nanoseconds per request: 1e9/10000001 would round to 99.
			{store.Limit{Algorithm: store.TokenBucket, Limit: 10_000_001, Window: time.Second}, "limit must be <= 31622 with a store and a window of 1s"},
		} {
			_, err := st.Take(ctx, "refused", tc.lim, 1)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		}
	})

	t.Run("token bucket, largest burst", func(t *testing.T) {
		lim := store.Limit{Algorithm: store.TokenBucket, Limit: 2, Window: day, Burst: 102}
		for _, n := range []int64{104 + 1, math.MaxInt64} {
			d, err := st.Take(ctx, "tb", lim, n)
			require.NoError(t, err)
			require.False(t, d.OK, "n=%d never fits", n)
		}
		d, err := st.Take(ctx, "tb", lim, 100)
		require.NoError(t, err)
		require.True(t, d.OK)
		for i := range 4 {
			d, err := st.Take(ctx, "tb", lim, 1)
			require.NoError(t, err)
			require.True(t, d.OK, "request %d of the last 4", i)
		}
		d, err = st.Take(ctx, "tb", lim, 1)
		require.NoError(t, err)
		assert.False(t, d.OK, "104 taken: spent")
		assert.Positive(t, d.RetryAfter)
		assert.LessOrEqual(t, d.RetryAfter, 12*time.Hour, "one token refills in 12h")
	})

	t.Run("sliding counter, largest limit and window", func(t *testing.T) {
		lim := store.Limit{Algorithm: store.SlidingCounter, Limit: maxLimit, Window: maxWindow}
		d, err := st.Take(ctx, "sc", lim, maxLimit-1)
		require.NoError(t, err)
		require.True(t, d.OK)
		for _, n := range []int64{2, maxLimit, math.MaxInt64} {
			d, err := st.Take(ctx, "sc", lim, n)
			require.NoError(t, err)
			require.False(t, d.OK, "n=%d does not fit", n)
		}
		d, err = st.Take(ctx, "sc", lim, 1)
		require.NoError(t, err)
		require.True(t, d.OK, "the last one fits: the count was not disturbed")
		d, err = st.Take(ctx, "sc", lim, 1)
		require.NoError(t, err)
		assert.False(t, d.OK)
	})

	t.Run("leaky bucket, longest window and wait", func(t *testing.T) {
		lim := store.Limit{Algorithm: store.LeakyBucket, Limit: 1, Window: maxWindow, MaxWait: maxWindow}
		d, err := st.Take(ctx, "lb", lim, 1)
		require.NoError(t, err)
		require.True(t, d.OK)
		assert.Zero(t, d.Wait)
		d, err = st.Take(ctx, "lb", lim, 1)
		require.NoError(t, err)
		require.True(t, d.OK)
		assert.LessOrEqual(t, d.Wait, maxWindow, "the next slot, a window on")
		assert.Greater(t, d.Wait, maxWindow-time.Minute)
		d, err = st.Take(ctx, "lb", lim, 1)
		require.NoError(t, err)
		assert.False(t, d.OK, "beyond the longest wait")
		assert.Positive(t, d.RetryAfter)
	})
}

// TestCostOf: a bucket's cost in a store is whole nanoseconds, window/limit
// rounded up, so it never admits more than its limit, and n requests cost n
// times one (the approximate mode's local bucket and the scripts agree).
func TestCostOf(t *testing.T) {
	for _, tc := range []struct{ w, limit, one int64 }{
		{int64(time.Second), 3, 333_333_334},
		{int64(time.Second), 4, 250_000_000},
		{int64(time.Second), 31622, 31624}, // 31623.5... rounded up
		{int64(24 * time.Hour), 7, 12_342_857_142_858},
	} {
		assert.Equal(t, tc.one, costOf(1, tc.w, tc.limit), "%d per %d", tc.limit, tc.w)
		for _, n := range []int64{2, 7, 1000} {
			c := costOf(n, tc.w, tc.limit)
			assert.Equal(t, n*tc.one, c)
			assert.GreaterOrEqual(t, c*tc.limit, n*tc.w, "never cheaper than n*w/limit")
		}
	}
}
