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

// TestErrWhileRedisNeverAnswered: a Store made while Redis is down (a
// killed redis-server, its port closed) reports it in Err: at once after
// Ping, and by its first sync round without one; Err clears by itself once
// Redis answers. Before the fix a Store that tracked no key counted each
// sync round a success without asking Redis, and Err stayed nil: an
// instance whose startup check failed showed its store healthy.
func TestErrWhileRedisNeverAnswered(t *testing.T) {
	srv := redistest.StartOwned(t)
	srv.Kill()
	for _, ping := range []bool{true, false} {
		st, err := redisstore.New(srv.Client(t), redisstore.WithSyncPeriod(10*time.Millisecond))
		require.NoError(t, err)
		if ping {
			err := st.Ping(context.Background())
			require.ErrorIs(t, err, store.ErrUnavailable)
			assert.Equal(t, err, st.Err())
		} else {
			require.Eventually(t, func() bool { return st.Err() != nil }, 30*time.Second, time.Millisecond,
				"the first sync round finds Redis down")
		}
		assert.ErrorIs(t, st.Err(), store.ErrUnavailable)
		require.NoError(t, st.Close())
	}
	st, err := redisstore.New(srv.Client(t), redisstore.WithSyncPeriod(10*time.Millisecond), redisstore.WithTimeout(10*time.Second))
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	require.Error(t, st.Ping(context.Background()))
	srv.Restart(t)
	require.Eventually(t, func() bool { return st.Err() == nil }, 30*time.Second, time.Millisecond,
		"a sync round finds Redis back")
	assert.NoError(t, st.Ping(context.Background()))
}
