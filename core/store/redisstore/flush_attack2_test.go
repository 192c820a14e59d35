package redisstore_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core/store"
	"github.com/sluicekit/sluice/core/store/redisstore"
	"github.com/sluicekit/sluice/core/store/redisstore/internal/redistest"
)

// TestApproxCountsBackAfterDataLoss: instance A admits 60 of a limit of
// 100 and goes quiet; Redis then loses its data (FLUSHALL, as a restart
// without persistence). "A Redis that lost its data gets each instance's
// whole count of the current window back at the next sync" (package doc):
// A's 60 must come back, so that instance B, taking the traffic, admits
// the 40 left and not 100.
//
// Failed before each Store checked Redis still held its counts: a sync
// exchanges only the keys used since the last one, so A's quiet key was
// never pushed again; Redis counted 0 for good, and B admitted 100 (160
// in the window).
func TestApproxCountsBackAfterDataLoss(t *testing.T) {
	srv := redistest.StartOwned(t)
	c := srv.Client(t)
	prefix := redistest.UniquePrefix()
	newStore := func() *redisstore.Store {
		st, err := redisstore.New(srv.Client(t), redisstore.WithPrefix(prefix), redisstore.WithSyncPeriod(10*time.Millisecond),
			redisstore.WithTimeout(10*time.Second))
		require.NoError(t, err)
		t.Cleanup(func() { _ = st.Close() })
		return st
	}
	ctx := context.Background()
	for _, alg := range []store.Algorithm{store.SlidingCounter, store.TokenBucket} {
		t.Run(string(alg), func(t *testing.T) {
			a, b := newStore(), newStore()
			key := "k-" + string(alg)
			lim := store.Limit{Algorithm: alg, Limit: 100, Window: 720 * time.Hour, Mode: store.Approximate}
			if alg == store.TokenBucket {
				lim.Burst = 0
			}
			for i := range 60 {
				d, err := a.Take(ctx, key, lim, 1)
				require.NoError(t, err)
				require.True(t, d.OK, "take %d", i)
			}
			held := func() bool { // Redis holds counts of key
				keys, err := c.Keys(ctx, prefix+":{"+key+"}:*").Result()
				return err == nil && len(keys) > 0
			}
			require.Eventually(t, held, 10*time.Second, time.Millisecond, "A pushes its counts")
			time.Sleep(50 * time.Millisecond) // A's key is quiet for rounds
			require.NoError(t, c.FlushAll(ctx).Err())
			assert.Eventually(t, held, 10*time.Second, time.Millisecond, "A pushes its counts again")
			admitted := 0
			for range 100 {
				d, err := b.Take(ctx, key, lim, 1)
				require.NoError(t, err)
				if d.OK {
					admitted++
				}
			}
			assert.LessOrEqual(t, admitted, 40, "B admitted "+strconv.Itoa(admitted)+" after A's 60 of 100")
		})
	}
}
