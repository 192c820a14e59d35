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

// TestModeChangeMoveThenUndo: during a rolling reload from approximate to
// exact mode, instance a (still approximate) admits a request and pushes
// it; b's exact decision moves the approximate counts to the exact state
// and admits one; then a undoes its request and pushes that. The
// approximate counts go below 0 (-1 here): the undo of an admission that
// moved to the exact state. That is the right net: the counts of both
// modes add up to the one admission standing (b's). Decisions read other
// instances' counts as at least 0, so no mode admits more for it: a fresh
// approximate instance admits the limit (the rolling reload's skew, one
// limit per mode; the exact state is not moved back while a's pushes mark
// the window approximate), not one more, and b the limit less the exact
// state's 2.
func TestModeChangeMoveThenUndo(t *testing.T) {
	srv := redisstore.SharedRedis(t)
	ctx := context.Background()
	prefix := redistest.UniquePrefix()
	a := newInstance(t, srv, prefix, append([]redisstore.Option{redisstore.WithSyncPeriod(5 * time.Millisecond)}, patient...)).st
	b := newInstance(t, srv, prefix, patient).st
	c := srv.Client(t)
	approx := store.Limit{Algorithm: store.SlidingCounter, Limit: 10, Window: time.Minute, Mode: store.Approximate}
	exact := approx
	exact.Mode = store.Exact
	counts := func() (approx, exact int64) { // in Redis
		keys, err := c.Keys(ctx, prefix+":{k}:asc:*").Result()
		require.NoError(t, err)
		for _, k := range keys {
			if v, err := c.Get(ctx, k).Result(); err == nil {
				n, err := strconv.ParseInt(v, 10, 64)
				require.NoError(t, err, "%s: %q", k, v)
				approx += n
			}
		}
		if v, err := c.Get(ctx, prefix+":{k}:sc:1m0s").Result(); err == nil {
			for _, f := range strings.Fields(v)[1:] {
				n, err := strconv.ParseInt(f, 10, 64)
				require.NoError(t, err, "%q", v)
				exact += n
			}
		}
		return approx, exact
	}
	pushed := func() {
		n := a.Stats().Syncs
		require.Eventually(t, func() bool { return a.Stats().Syncs > n+1 }, 10*time.Second, time.Millisecond)
	}
	d, err := a.Take(ctx, "k", approx, 1)
	require.NoError(t, err)
	require.True(t, d.OK)
	pushed()
	ap, ex := counts()
	require.Equal(t, [2]int64{1, 0}, [2]int64{ap, ex}, "a's admission pushed")
	db, err := b.Take(ctx, "k", exact, 1)
	require.NoError(t, err)
	require.True(t, db.OK)
	ap, ex = counts()
	require.Equal(t, [2]int64{0, 2}, [2]int64{ap, ex}, "moved to the exact state, and b's")
	require.NoError(t, a.Undo(ctx, "k", approx, d, 1))
	pushed()
	ap, ex = counts()
	t.Logf("approximate counts %d, exact %d", ap, ex)
	assert.Equal(t, int64(1), ap+ex, "both modes' counts: b's admission")
	require.NoError(t, a.Close())

	take := func(st *redisstore.Store, lim store.Limit) (admitted int) {
		for range 20 {
			d, err := st.Take(ctx, "k", lim, 1)
			require.NoError(t, err)
			if d.OK {
				admitted++
			}
		}
		return admitted
	}
	assert.Equal(t, 10, take(newInstance(t, srv, prefix, patient).st, approx), "a fresh approximate instance")
	assert.Equal(t, 8, take(b, exact), "b, exact")
}
