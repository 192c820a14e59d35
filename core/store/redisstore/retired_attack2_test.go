package redisstore_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core/store"
	"github.com/sluicekit/sluice/core/store/redisstore"
	"github.com/sluicekit/sluice/core/store/redisstore/internal/redistest"
)

// TestApproxReplacedLimitPushedAfterOutage: an approximate sliding counter
// admits 60 requests, 59 locally while Redis is down, then its limit is
// changed (a reload), which replaces the key's local entry: "the next sync
// pushes what the old entry admitted" (Store.entry), and the counts of a
// failed exchange are pushed again next time. The syncs fail until Redis
// is back (restarted, empty); then Redis must count all 60 (the other
// instances limit on it).
//
// Failed before a replaced entry whose push failed was kept for the next
// round: it was dropped with the failed round, and Redis counted 1 of 60
// for good.
func TestApproxReplacedLimitPushedAfterOutage(t *testing.T) {
	srv := redistest.StartOwned(t)
	c := srv.Client(t)
	prefix := redistest.UniquePrefix()
	st, err := redisstore.New(srv.Client(t), redisstore.WithPrefix(prefix), redisstore.WithSyncPeriod(200*time.Millisecond),
		redisstore.WithTimeout(100*time.Millisecond)) // a sync age of 2s
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	ctx := context.Background()
	lim := store.Limit{Algorithm: store.SlidingCounter, Limit: 1000, Window: 720 * time.Hour, Mode: store.Approximate}
	count := func() int64 { // Redis's count of the key's windows
		keys, err := c.Keys(ctx, prefix+":{k}:asc:*").Result()
		require.NoError(t, err)
		var n int64
		for _, k := range keys {
			if !strings.HasSuffix(k, ":in") {
				v, err := c.Get(ctx, k).Int64()
				require.NoError(t, err)
				n += v
			}
		}
		return n
	}
	d, err := st.Take(ctx, "k", lim, 1)
	require.NoError(t, err)
	require.True(t, d.OK)
	require.Eventually(t, func() bool { return count() == 1 }, 10*time.Second, time.Millisecond)

	srv.Kill()
	for i := range 59 {
		d, err := st.Take(ctx, "k", lim, 1)
		require.NoError(t, err, "take %d: Redis frozen for less than the sync age", i)
		require.True(t, d.OK)
	}
	lim2 := lim
	lim2.Limit = 2000
	_, _ = st.Take(ctx, "k", lim2, 1) // replaces the entry; may fail (never synced)
	errs := st.Stats().SyncErrors
	require.Eventually(t, func() bool { return st.Stats().SyncErrors >= errs+2 }, 10*time.Second, time.Millisecond,
		"sync rounds fail while Redis is down")
	srv.Restart(t)
	assert.Eventually(t, func() bool { return count() >= 60 }, 10*time.Second, 5*time.Millisecond,
		"Redis counts the 60 the replaced entry admitted; counts "+strconv.FormatInt(count(), 10))
}
