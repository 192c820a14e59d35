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

// TestLeakyCancelledClientsGiveTheirTurnBack: 40 clients queue on a leaky
// bucket of 10 per second (slots 100ms apart) over a real loopback server;
// 24 of them hang up. The next patient client gets the earliest slot none
// of the 15 still waiting holds, 100ms, not the one after all 40 (4s, as
// before holes were reused). Time is the Guard's fake clock: the slots are
// exact whatever the load, and nothing waits on a wall-clock bound but a
// generous failure timeout.
func TestLeakyCancelledClientsGiveTheirTurnBack(t *testing.T) {
	const resource = "GET /slow"
	fake := clock.NewFake(0)
	g, err := core.New(core.WithClock(fake), core.WithRules(core.Rule{
		Resource: resource, Kind: core.KindFlow, Algorithm: "leaky-bucket",
		Limit: 10, Window: time.Second, MaxWait: time.Minute,
	}))
	require.NoError(t, err)
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
	send := func(ctx context.Context, i int) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/slow", nil)
		if err != nil {
			results <- result{i: i, err: err}
			return
		}
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
		go send(cctx, i)
		if i == 0 {
			r := <-results // slot 0 is now: served at once
			require.NoError(t, r.err)
			require.Equal(t, http.StatusOK, r.code)
			continue
		}
		require.NoError(t, fake.WaitForSleepers(ctx, i))
	}
	// 24 hang up: all of 1..32 but 3, 7, ..., 31.
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
	require.Equal(t, 15, fake.Sleepers())

	// Patient clients take slots 1 and 2, the earliest free ones.
	for i, slot := range []time.Duration{100 * time.Millisecond, 200 * time.Millisecond} {
		go send(ctx, 100+i)
		require.NoError(t, fake.WaitForSleepers(ctx, 16))
		fake.Set(slot - 1)
		assert.Equal(t, 16, fake.Sleepers(), "nobody's slot before %s", slot)
		fake.Set(slot)
		select {
		case r := <-results:
			require.NoError(t, r.err)
			assert.Equal(t, 100+i, r.i, "the patient client is served at %s", slot)
			assert.Equal(t, http.StatusOK, r.code)
		case <-ctx.Done():
			t.Fatalf("the patient client was not served at %s", slot)
		}
	}
	for _, cancel := range cancels {
		cancel()
	}
}
