package redisstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core/store"
	"github.com/sluicekit/sluice/core/store/redisstore"
	"github.com/sluicekit/sluice/core/store/redisstore/internal/redistest"
)

// TestReloadedBucketKeepsItsDebtAfterABurst: an exact bucket's cost of one
// request, kept beside its TAT, must live as long as the TAT, however the
// TAT grew after the cost was written. 1 then 50 of a token bucket of 100
// per 100s (1s a request), the window then reloaded to 200s (2s a request):
// the 49 or so owed are owed at 2s each, so 60 more are too many (49 + 60 >
// 100). The cost was written with the TTL of the first request's TAT only
// (1s plus the idle expiry), and the TAT the 50 extended outlived it: after
// the cost expired the TAT was read as time owed at the new cost, 25
// requests, and the 60 were admitted.
func TestReloadedBucketKeepsItsDebtAfterABurst(t *testing.T) {
	srv := redisstore.SharedRedis(t)
	ctx := context.Background()
	in := newInstance(t, srv, redistest.UniquePrefix(), append([]redisstore.Option{redisstore.WithIdleExpiry(time.Millisecond)}, patient...))
	lim := store.Limit{Algorithm: store.TokenBucket, Limit: 100, Window: 100 * time.Second, Mode: store.Exact}
	for _, n := range []int64{1, 50} {
		d, err := in.st.Take(ctx, "k", lim, n)
		require.NoError(t, err)
		require.True(t, d.OK)
	}
	time.Sleep(1500 * time.Millisecond) // the first request's TAT, 1s, and the idle expiry have passed
	lim.Window = 200 * time.Second
	d, err := in.st.Take(ctx, "k", lim, 60)
	require.NoError(t, err)
	assert.False(t, d.OK, "about 49 owed of 100: 60 more are too many")
}
