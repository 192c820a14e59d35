package core_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core"
)

// TestHotspotAbandonedWaitAfterEvictionGivesItsSlotBack: alice queues on a
// per-user leaky bucket of 10 per second (slots 100ms apart); while her
// second request waits for its slot, bob's request evicts her from a table
// of one value, and then her waiting client gives up. Her next request gets
// the slot the one that gave up held, at 100ms, not the one after it: the
// given-back slot leaves her debt. Before, an Undo on an evicted record was
// ignored and her next request waited until 200ms. Time is the Guard's
// fake clock.
func TestHotspotAbandonedWaitAfterEvictionGivesItsSlotBack(t *testing.T) {
	g, fc := newGuard(t, core.Rule{Name: "per-user", Resource: "r", Kind: core.KindHotspot, Param: "header:X-User-ID",
		Algorithm: "leaky-bucket", Limit: 10, Window: time.Second, MaxWait: time.Minute, MaxKeys: 1})
	ctx, stop := context.WithTimeout(context.Background(), 30*time.Second) // failure timeout only
	defer stop()
	start := fc.Now()
	enter := func(ctx context.Context, u string, done chan<- error) {
		e, err := g.Enter(ctx, "r", user(u))
		if err == nil {
			e.Exit(nil)
		}
		done <- err
	}
	done := make(chan error, 1)
	enter(ctx, "alice", done) // slot 0: now
	require.NoError(t, <-done)

	gone, hangUp := context.WithCancel(ctx)
	go enter(gone, "alice", done) // slot 1, at 100ms
	require.NoError(t, fc.WaitForSleepers(ctx, 1))
	enter(ctx, "bob", done) // evicts alice, her debt the end of slot 1
	require.NoError(t, <-done)
	hangUp()
	require.ErrorIs(t, <-done, context.Canceled)

	go enter(ctx, "alice", done)
	require.NoError(t, fc.WaitForSleepers(ctx, 1))
	fc.Set(start + 100*time.Millisecond - 1)
	expired, cancel := context.WithCancel(ctx)
	cancel()
	assert.NoError(t, fc.WaitForSleepers(expired, 1), "served before slot 1")
	fc.Set(start + 100*time.Millisecond) // wakes the sleepers due by then, at once
	require.Error(t, fc.WaitForSleepers(expired, 1), "alice's next request is served at slot 1, which the client that gave up held")
	require.NoError(t, <-done)
}
