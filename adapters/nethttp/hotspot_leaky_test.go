package sluicehttp_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core"
)

// TestHotspotLeakyCancelledClientsGiveTheirTurnBack: 40 clients of one user
// (X-User-ID) queue on a per-user leaky bucket of 10 per second (slots
// 100ms apart) over a real loopback server; 24 of them hang up. The next
// patient clients of that user get the earliest slots none of the 15 still
// waiting holds, 100ms and 200ms, not the ones after all 40 (4s, as before
// per-user buckets reused given-back slots); another user's queue is its
// own. Time is the Guard's fake clock: the slots are exact whatever the
// load, and nothing waits on a wall-clock bound but a generous failure
// timeout.
func TestHotspotLeakyCancelledClientsGiveTheirTurnBack(t *testing.T) {
	q := newLeakyQueue(t, core.Rule{Kind: core.KindHotspot, Param: "header:X-User-ID", Algorithm: "leaky-bucket", Limit: 10, Window: time.Second, MaxWait: time.Minute})
	q.queue("alice")
	// bob queues too: his first request is served at once, his second
	// waits 100ms, in his own bucket.
	go q.send(q.ctx, 50, "bob")
	if r := <-q.results; assert.NoError(t, r.err) {
		assert.Equal(t, 50, r.i)
	}
	go q.send(q.ctx, 51, "bob")
	require.NoError(t, q.fake.WaitForSleepers(q.ctx, 40))

	// 24 of alice's clients hang up.
	q.hangUp()
	// Exactly 16 wait, 15 of alice's clients and bob's second:
	// WaitForSleepers with a done context does not wait.
	expired, cancelExpired := context.WithCancel(context.Background())
	cancelExpired()
	require.NoError(t, q.fake.WaitForSleepers(expired, 16))
	require.Error(t, q.fake.WaitForSleepers(expired, 17))

	// alice's patient clients take slots 1 and 2, the earliest free ones;
	// bob's second is served at his own 100ms.
	for i, slot := range []time.Duration{100 * time.Millisecond, 200 * time.Millisecond} {
		go q.send(q.ctx, 100+i, "alice")
		require.NoError(t, q.fake.WaitForSleepers(q.ctx, 17-i))
		q.fake.Set(slot - 1)
		assert.NoError(t, q.fake.WaitForSleepers(expired, 17-i), "nobody's slot before %s", slot)
		q.fake.Set(slot)
		want := map[int]bool{100 + i: true}
		if i == 0 {
			want[51] = true
		}
		for len(want) > 0 {
			select {
			case r := <-q.results:
				require.NoError(t, r.err)
				assert.True(t, want[r.i], "client %d served at %s", r.i, slot)
				assert.Equal(t, http.StatusOK, r.code)
				delete(want, r.i)
			case <-q.ctx.Done():
				t.Fatalf("clients %v were not served at %s", want, slot)
			}
		}
	}
}
