package sluicehttp_test

import (
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	sluicehttp "github.com/sluicekit/sluice/adapters/nethttp"
	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/clock"
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
	const resource = "GET /slow"
	fake := clock.NewFake(0)
	g, err := core.New(core.WithClock(fake), core.WithRules(core.Rule{
		Resource: resource, Kind: core.KindHotspot, Param: "header:X-User-ID", Algorithm: "leaky-bucket",
		Limit: 10, Window: time.Second, MaxWait: time.Minute,
	}))
	require.NoError(t, err)
	t.Cleanup(func() { _ = g.Close() })
	mux := http.NewServeMux()
	mux.HandleFunc(resource, ok)
	srv := serve(t, sluicehttp.Middleware(g)(mux))

	ctx, stop := context.WithTimeout(context.Background(), 30*time.Second) // failure timeout only
	defer stop()
	type result struct {
		i    int
		code int
		err  error
	}
	results := make(chan result, 64)
	send := func(ctx context.Context, i int, user string) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/slow", nil)
		if err != nil {
			results <- result{i: i, err: err}
			return
		}
		req.Header.Set("X-User-ID", user)
		res, err := srv.Client().Do(req)
		if err != nil {
			results <- result{i: i, err: err}
			return
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		results <- result{i: i, code: res.StatusCode}
	}

	// Client i takes slot i: each is sent once the one before it waits.
	cancels := make([]context.CancelFunc, 40)
	for i := range 40 {
		cctx, cancel := context.WithCancel(ctx)
		cancels[i] = cancel
		defer cancel()
		go send(cctx, i, "alice")
		if i == 0 {
			r := <-results // slot 0 is now: served at once
			require.NoError(t, r.err)
			require.Equal(t, http.StatusOK, r.code)
			continue
		}
		require.NoError(t, fake.WaitForSleepers(ctx, i))
	}
	// bob queues too: his first request is served at once, his second
	// waits 100ms, in his own bucket.
	go send(ctx, 50, "bob")
	if r := <-results; assert.NoError(t, r.err) {
		assert.Equal(t, 50, r.i)
	}
	go send(ctx, 51, "bob")
	require.NoError(t, fake.WaitForSleepers(ctx, 40))

	// 24 of alice's clients hang up: all of 1..32 but 3, 7, ..., 31.
	for i := 1; i <= 32; i++ {
		if i%4 != 3 {
			cancels[i]()
		}
	}
	for range 24 {
		select {
		case r := <-results:
			require.Error(t, r.err, "client %d hung up", r.i)
		case <-ctx.Done():
			t.Fatal("the clients did not hang up")
		}
	}
	// The server gives each turn back when it sees the hang-up.
	for {
		st, _ := g.Stats(resource)
		if st.Total.BlockedBy[core.ReasonCancelled] == 24 {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the server saw %d of 24 hang-ups", st.Total.BlockedBy[core.ReasonCancelled])
		case <-time.After(time.Millisecond):
		}
	}
	require.Equal(t, 16, fake.Sleepers(), "15 of alice's clients and bob's second")

	// alice's patient clients take slots 1 and 2, the earliest free ones;
	// bob's second is served at his own 100ms.
	for i, slot := range []time.Duration{100 * time.Millisecond, 200 * time.Millisecond} {
		go send(ctx, 100+i, "alice")
		require.NoError(t, fake.WaitForSleepers(ctx, 17-i))
		fake.Set(slot - 1)
		assert.Equal(t, 17-i, fake.Sleepers(), "nobody's slot before %s", slot)
		fake.Set(slot)
		want := map[int]bool{100 + i: true}
		if i == 0 {
			want[51] = true
		}
		for len(want) > 0 {
			select {
			case r := <-results:
				require.NoError(t, r.err)
				assert.True(t, want[r.i], "client %d served at %s", r.i, slot)
				assert.Equal(t, http.StatusOK, r.code)
				delete(want, r.i)
			case <-ctx.Done():
				t.Fatalf("clients %v were not served at %s", want, slot)
			}
		}
	}
	for _, cancel := range cancels {
		cancel()
	}
}
