package sluicehttp_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
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
	q := newLeakyQueue(t, core.Rule{Kind: core.KindFlow, Algorithm: "leaky-bucket", Limit: 10, Window: time.Second, MaxWait: time.Minute})
	q.queue("")
	q.hangUp()
	// Exactly 15 wait: WaitForSleepers with a done context does not wait.
	expired, cancelExpired := context.WithCancel(context.Background())
	cancelExpired()
	require.NoError(t, q.fake.WaitForSleepers(expired, 15))
	require.Error(t, q.fake.WaitForSleepers(expired, 16))

	// Patient clients take slots 1 and 2, the earliest free ones.
	for i, slot := range []time.Duration{100 * time.Millisecond, 200 * time.Millisecond} {
		go q.send(q.ctx, 100+i, "")
		require.NoError(t, q.fake.WaitForSleepers(q.ctx, 16))
		q.fake.Set(slot - 1)
		assert.NoError(t, q.fake.WaitForSleepers(expired, 16), "nobody's slot before %s", slot)
		q.fake.Set(slot)
		select {
		case r := <-q.results:
			require.NoError(t, r.err)
			assert.Equal(t, 100+i, r.i, "the patient client is served at %s", slot)
			assert.Equal(t, http.StatusOK, r.code)
		case <-q.ctx.Done():
			t.Fatalf("the patient client was not served at %s", slot)
		}
	}
}

// leakyResult is what one client of a leakyQueue got.
type leakyResult struct {
	i    int
	code int
	err  error
}

// leakyQueue is the scenario of TestLeakyCancelledClientsGiveTheirTurnBack
// and TestHotspotLeakyCancelledClientsGiveTheirTurnBack: 40 clients queue
// on a leaky bucket of 10 per second (slots 100ms apart) on a fake clock,
// then 24 of them hang up.
type leakyQueue struct {
	t       *testing.T
	ctx     context.Context // the failure timeout
	fake    *clock.Fake     // the Guard's clock
	g       *core.Guard
	srv     *httptest.Server
	results chan leakyResult
	cancels []context.CancelFunc // of the 40 clients, called at cleanup
}

// newLeakyQueue serves GET /slow over a real loopback server through a
// Guard of rule (for resource GET /slow) on a fake clock.
func newLeakyQueue(t *testing.T, rule core.Rule) *leakyQueue {
	rule.Resource = "GET /slow"
	fake := clock.NewFake(0)
	g, err := core.New(core.WithClock(fake), core.WithRules(rule))
	require.NoError(t, err)
	t.Cleanup(func() { _ = g.Close() })
	mux := http.NewServeMux()
	mux.HandleFunc(rule.Resource, ok)
	ctx, stop := context.WithTimeout(context.Background(), 30*time.Second) // failure timeout only
	q := &leakyQueue{t: t, ctx: ctx, fake: fake, g: g, srv: serve(t, sluicehttp.Middleware(g)(mux)), results: make(chan leakyResult, 64)}
	t.Cleanup(func() {
		for _, cancel := range q.cancels {
			cancel()
		}
		stop()
	})
	return q
}

// send sends client i's GET /slow, with the X-User-ID user unless it is
// empty, and reports its outcome on q.results.
func (q *leakyQueue) send(ctx context.Context, i int, user string) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, q.srv.URL+"/slow", nil)
	if err != nil {
		q.results <- leakyResult{i: i, err: err}
		return
	}
	if user != "" {
		req.Header.Set("X-User-ID", user)
	}
	res, err := q.srv.Client().Do(req)
	if err != nil {
		q.results <- leakyResult{i: i, err: err}
		return
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	q.results <- leakyResult{i: i, code: res.StatusCode}
}

// queue sends clients 0..39 of user; client i takes slot i: each is sent
// once the one before it waits, and client 0 is served at once.
func (q *leakyQueue) queue(user string) {
	t := q.t
	for i := range 40 {
		ctx, cancel := context.WithCancel(q.ctx)
		q.cancels = append(q.cancels, cancel)
		go q.send(ctx, i, user)
		if i == 0 {
			r := <-q.results // slot 0 is now: served at once
			require.NoError(t, r.err)
			require.Equal(t, http.StatusOK, r.code)
			continue
		}
		require.NoError(t, q.fake.WaitForSleepers(q.ctx, i))
	}
}

// hangUp cancels 24 of the queued clients, all of 1..32 but 3, 7, ..., 31,
// and waits until the server has seen them hang up and given each turn
// back.
func (q *leakyQueue) hangUp() {
	t := q.t
	for i := 1; i <= 32; i++ {
		if i%4 != 3 {
			q.cancels[i]()
		}
	}
	for range 24 {
		select {
		case r := <-q.results:
			require.Error(t, r.err, "client %d hung up", r.i)
		case <-q.ctx.Done():
			t.Fatal("the clients did not hang up")
		}
	}
	for {
		st, _ := q.g.Stats("GET /slow")
		if st.Total.BlockedBy[core.ReasonCancelled] == 24 {
			return
		}
		select {
		case <-q.ctx.Done():
			t.Fatalf("the server saw %d of 24 hang-ups", st.Total.BlockedBy[core.ReasonCancelled])
		case <-time.After(time.Millisecond):
		}
	}
}
