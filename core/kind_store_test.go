package core_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/clock"
	"github.com/sluicekit/sluice/core/store"
)

// recordingStore is a Store that keeps the last decision its Take
// returned and the last one its Undo was given.
type recordingStore struct {
	store.Store
	mu            sync.Mutex
	taken, undone store.Decision
}

func (s *recordingStore) Take(ctx context.Context, key string, lim store.Limit, n int64) (store.Decision, error) {
	d, err := s.Store.Take(ctx, key, lim, n)
	s.mu.Lock()
	s.taken = d
	s.mu.Unlock()
	return d, err
}

func (s *recordingStore) Undo(ctx context.Context, key string, lim store.Limit, d store.Decision, n int64) error {
	s.mu.Lock()
	s.undone = d
	s.mu.Unlock()
	return s.Store.Undo(ctx, key, lim, d, n)
}

// TestStoreUndoGetsItsDecisionBack: when a later rule rejects a request a
// Store admitted, the Store's Undo gets the decision its Take returned,
// Ref and Mark included (the memory store's sliding counter keeps its
// window in Ref, its buckets their slot in Mark), and gives the quota
// back. (A leaky bucket's rule is asked last, as it makes the request
// wait: see TestStoreUndoOfCancelledWait.)
func TestStoreUndoGetsItsDecisionBack(t *testing.T) {
	for _, alg := range []core.Algorithm{core.AlgorithmSlidingCounter, core.AlgorithmTokenBucket} {
		t.Run(string(alg), func(t *testing.T) {
			fc := clock.NewFake(time.Hour)
			m, err := store.NewMemory(fc, 0)
			require.NoError(t, err)
			rs := &recordingStore{Store: m}
			shared := core.Rule{Name: "shared", Resource: "r", Kind: core.KindFlow, Algorithm: alg, Limit: 2, Window: time.Minute, Store: "shared"}
			g, err := core.New(core.WithClock(fc), core.WithStore("shared", rs), core.WithRules(shared,
				core.Rule{Name: "gate", Resource: "r", Kind: core.KindFlow, Limit: 1, Window: time.Minute}))
			require.NoError(t, err)
			defer g.Close()
			ctx := context.Background()
			e, err := g.Enter(ctx, "r")
			require.NoError(t, err)
			e.Exit(nil)

			_, err = g.Enter(ctx, "r")
			var be *core.BlockedError
			require.True(t, errors.As(err, &be), "%v", err)
			require.Equal(t, "gate", be.Rule)
			rs.mu.Lock()
			taken, undone := rs.taken, rs.undone
			rs.mu.Unlock()
			require.True(t, taken.OK, "the store admitted the second request")
			assert.True(t, taken.Ref != nil || taken.Mark != [2]int64{}, "the memory store keeps a record for Undo")
			assert.Equal(t, taken, undone, "Undo gets Take's decision back, Ref and Mark included")

			lim := store.Limit{Algorithm: alg, Limit: 2, Window: time.Minute, Mode: store.Exact}
			d, err := m.Take(ctx, "shared", lim, 1)
			require.NoError(t, err)
			assert.True(t, d.OK, "the undone request's quota is back")
		})
	}
}

// TestStoreUndoOfCancelledWait: a request a Store's leaky bucket admitted
// to wait for its turn, whose caller gives up waiting, gives its slot back
// through Undo, which gets the slot (Mark) its Take returned: the next
// request takes that turn instead of the one after it.
func TestStoreUndoOfCancelledWait(t *testing.T) {
	fc := clock.NewFake(time.Hour)
	m, err := store.NewMemory(fc, 0)
	require.NoError(t, err)
	rs := &recordingStore{Store: m}
	// A slot per 30s; a request may wait 30s: the second request's turn,
	// not a third's.
	g, err := core.New(core.WithClock(fc), core.WithStore("shared", rs), core.WithRules(core.Rule{
		Name: "shared", Resource: "r", Kind: core.KindFlow, Algorithm: core.AlgorithmLeakyBucket,
		Limit: 2, Window: time.Minute, MaxWait: 30 * time.Second, Store: "shared"}))
	require.NoError(t, err)
	defer g.Close()
	e, err := g.Enter(context.Background(), "r")
	require.NoError(t, err)
	e.Exit(nil)

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := g.Enter(ctx, "r")
		done <- err
	}()
	require.NoError(t, fc.WaitForSleepers(context.Background(), 1))
	cancel()
	require.ErrorIs(t, <-done, context.Canceled)
	rs.mu.Lock()
	taken, undone := rs.taken, rs.undone
	rs.mu.Unlock()
	require.True(t, taken.OK)
	require.Equal(t, 30*time.Second, taken.Wait)
	assert.NotEqual(t, [2]int64{}, taken.Mark, "the slot's end")
	assert.Equal(t, taken, undone, "Undo gets Take's decision back, Mark included")

	d, err := m.Take(context.Background(), "shared", store.Limit{Algorithm: store.LeakyBucket, Limit: 2, Window: time.Minute, MaxWait: 30 * time.Second, Mode: store.Exact}, 1)
	require.NoError(t, err)
	assert.True(t, d.OK, "the given-back turn is taken again")
	assert.Equal(t, 30*time.Second, d.Wait)
}
