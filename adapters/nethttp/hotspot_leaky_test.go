package sluicehttp_test

import (
	"context"
	"io"
	"net/http"
	"strings"
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

// TestHotspotLastAdmittedHintMatchesNextBlock: over a real loopback server,
// the RateLimit t of the 200 that empties a per-user bucket equals the t
// and Retry-After of the 429 right after it: the seconds until the user's
// next request passes. Per-user token buckets of 2 per 10s (a token every
// 5s: before, the 200 said t=10 and the 429 t=5) and of 3 per minute with
// a burst of 2, and a per-user leaky bucket of 2 per 10s with MaxWait 2s
// (t=3), on the Guard's fake clock.
func TestHotspotLastAdmittedHintMatchesNextBlock(t *testing.T) {
	for _, c := range []struct {
		name string
		rule core.Rule
		t    string // the t of both
	}{
		{"token-bucket", core.Rule{Algorithm: "token-bucket", Limit: 2, Window: 10 * time.Second}, "5"},
		{"burst", core.Rule{Algorithm: "token-bucket", Limit: 3, Window: time.Minute, Burst: 2}, "20"},
		{"leaky-bucket", core.Rule{Algorithm: "leaky-bucket", Limit: 2, Window: 10 * time.Second, MaxWait: 2 * time.Second}, "3"},
	} {
		t.Run(c.name, func(t *testing.T) {
			rule := c.rule
			rule.Name, rule.Resource, rule.Kind, rule.Param = "per-user", "GET /items", core.KindHotspot, "header:X-User-ID"
			g, err := core.New(core.WithClock(clock.NewFake(0)), core.WithRules(rule))
			require.NoError(t, err)
			t.Cleanup(func() { _ = g.Close() })
			mux := http.NewServeMux()
			mux.HandleFunc(rule.Resource, ok)
			srv := serve(t, sluicehttp.Middleware(g)(mux))
			get := func() *http.Response {
				req, err := http.NewRequest(http.MethodGet, srv.URL+"/items", nil)
				require.NoError(t, err)
				req.Header.Set("X-User-ID", "alice")
				res, err := srv.Client().Do(req)
				require.NoError(t, err)
				_, _ = io.Copy(io.Discard, res.Body)
				res.Body.Close()
				return res
			}
			var last *http.Response
			for i := 0; ; i++ {
				require.Less(t, i, 10, "never emptied")
				res := get()
				require.Equal(t, http.StatusOK, res.StatusCode, "request %d", i)
				if last = res; strings.Contains(res.Header.Get("RateLimit"), ";r=0;") {
					break
				}
			}
			assert.Equal(t, `"per-user";r=0;t=`+c.t, last.Header.Get("RateLimit"), "the 200 that empties the bucket")
			res := get()
			require.Equal(t, http.StatusTooManyRequests, res.StatusCode)
			assert.Equal(t, `"per-user";r=0;t=`+c.t, res.Header.Get("RateLimit"), "the 429 right after it")
			assert.Equal(t, c.t, res.Header.Get("Retry-After"))
		})
	}
}
