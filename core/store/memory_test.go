package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/clock"
	"github.com/sluicekit/sluice/core/store"
	"github.com/sluicekit/sluice/core/store/storetest"
)

func TestMemoryConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Harness {
		fc := clock.NewFake(time.Hour)
		m, err := store.NewMemory(fc, 0)
		require.NoError(t, err)
		return storetest.Harness{Store: m, Sleep: fc.Advance, Mode: store.Exact}
	})
}

// TestMemoryBounded floods a memory store of 10 keys with 1000 keys of a
// token bucket of one request a second: it keeps 10; those beyond are
// refused while the 10 buckets have not refilled, and replace them after.
func TestMemoryBounded(t *testing.T) {
	fc := clock.NewFake(0)
	m, err := store.NewMemory(fc, 10)
	require.NoError(t, err)
	lim := store.Limit{Algorithm: store.TokenBucket, Limit: 1, Window: time.Second}
	for i := range 1000 {
		_, err := m.Take(context.Background(), string(rune('a'+i%26))+time.Duration(i).String(), lim, 1)
		if i < 10 {
			require.NoError(t, err)
		} else {
			require.ErrorIs(t, err, store.ErrKeyUnavailable)
			require.ErrorIs(t, err, store.ErrUnavailable)
		}
	}
	assert.Equal(t, 10, store.Len(m))
	fc.Advance(time.Second)
	for i := range 100 {
		_, err := m.Take(context.Background(), "late"+time.Duration(i).String(), lim, 1)
		require.Equal(t, i < 10, err == nil, "key %d: %v", i, err)
	}
	assert.Equal(t, 10, store.Len(m))
}

// TestMemoryFloodKeepsLimitedKeys limits a user, then floods the store
// with new keys: the user stays limited until its own window lets it
// through again, for each algorithm.
//
// Failed before: a new key beyond maxKeys replaced an arbitrary key, so the
// flood reset the limited user, who was admitted 5 more times at once.
func TestMemoryFloodKeepsLimitedKeys(t *testing.T) {
	for _, alg := range []store.Algorithm{store.SlidingCounter, store.TokenBucket, store.LeakyBucket} {
		t.Run(string(alg), func(t *testing.T) {
			fc := clock.NewFake(time.Hour)
			m, err := store.NewMemory(fc, 100)
			require.NoError(t, err)
			ctx := context.Background()
			lim := store.Limit{Algorithm: alg, Limit: 5, Window: time.Minute}
			admitted := func(key string) int {
				n := 0
				for range 10 {
					if d, err := m.Take(ctx, key, lim, 1); err == nil && d.OK {
						n++
					}
				}
				return n
			}
			require.Positive(t, admitted("victim"))
			for i := range 10000 {
				_, _ = m.Take(ctx, "junk"+time.Duration(i).String(), lim, 1)
				if i%1000 == 999 {
					fc.Advance(time.Second)
					assert.Zero(t, admitted("victim"), "after %d junk keys", i+1)
				}
			}
			assert.LessOrEqual(t, store.Len(m), 100)
			fc.Advance(2 * time.Minute)
			assert.Positive(t, admitted("victim"), "its window over")
			assert.Positive(t, admitted("newcomer"), "junk keys refilled make room")
		})
	}
}

// TestMemoryFullUnderAGuard floods a Guard's hotspot rule on a memory
// store of 10 keys: the limited user stays limited by the store, the new
// users beyond the store's room get the rule's local limit, and the store
// stays healthy (a full store is no failure of it: its breaker never opens).
func TestMemoryFullUnderAGuard(t *testing.T) {
	fc := clock.NewFake(time.Hour)
	m, err := store.NewMemory(fc, 10)
	require.NoError(t, err)
	g, err := core.New(core.WithClock(fc), core.WithStore("m", m), core.WithRules(core.Rule{Name: "per-user", Resource: "x",
		Kind: core.KindHotspot, Param: "header:U", Limit: 5, Window: time.Minute, Store: "m", LocalLimit: 2}))
	require.NoError(t, err)
	t.Cleanup(func() { _ = g.Close() })
	enter := func(user string) error {
		e, err := g.Enter(context.Background(), "x", core.WithParams(core.ParamMap{"header:U": {user}}))
		e.Exit(nil)
		return err
	}
	for range 5 {
		require.NoError(t, enter("victim"))
	}
	for i := range 100 {
		before := g.Stores()[0].Fallbacks
		require.NoError(t, enter("junk"+time.Duration(i).String()))
		assert.Equal(t, i >= 9, g.Stores()[0].Fallbacks > before, "user %d of 100: the store has room for 9 besides the victim", i)
		var v *core.BlockedError
		require.ErrorAs(t, enter("victim"), &v)
		assert.False(t, v.Fallback, "the victim is limited by the store")
	}
	require.NoError(t, enter("newcomer"))
	require.NoError(t, enter("newcomer"))
	var b *core.BlockedError
	require.ErrorAs(t, enter("newcomer"), &b)
	assert.True(t, b.Fallback, "the local limit, 2")
	st := g.Stores()[0]
	assert.True(t, st.Healthy)
	assert.Zero(t, st.Errors)
	assert.Equal(t, int64(91+3), st.Fallbacks)
}

func TestNewMemoryRejectsBadArguments(t *testing.T) {
	_, err := store.NewMemory(nil, 0)
	assert.ErrorContains(t, err, "clock is nil")
	_, err = store.NewMemory(clock.NewFake(0), -1)
	assert.ErrorContains(t, err, "maxKeys must be >= 0, got -1")
}
