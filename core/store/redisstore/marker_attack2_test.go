package redisstore

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core/store"
	"github.com/sluicekit/sluice/core/store/redisstore/internal/redistest"
)

// TestMarkerOutlivesTheSyncPeriod: a Store's marker (see syncChunk) must
// outlive the time between two sync rounds, even with the longest sync
// period, or every round would find it gone and push every key again, and
// no quiet key would ever be forgotten. With a TTL of a minute, a sync
// period of a minute did.
func TestMarkerOutlivesTheSyncPeriod(t *testing.T) {
	srv := sharedServer(t)
	c := srv.Client(t)
	st, err := New(c, WithPrefix(redistest.UniquePrefix()), WithSyncPeriod(maxSyncPeriod), WithTimeout(10*time.Second))
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	ctx := context.Background()
	_, err = st.Take(ctx, "k", store.Limit{Algorithm: store.SlidingCounter, Limit: 10, Window: time.Second, Mode: store.Approximate}, 1)
	require.NoError(t, err)
	st.syncOnce()
	ttl, err := c.PTTL(ctx, st.o.prefix+":{"+st.id+"}:alive").Result()
	require.NoError(t, err)
	assert.Greater(t, ttl, 2*maxSyncPeriod, "the marker's expiry")
}
