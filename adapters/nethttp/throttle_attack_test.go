package sluicehttp_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	sluicehttp "github.com/sluicekit/sluice/adapters/nethttp"
	"github.com/sluicekit/sluice/core/clock"
	"github.com/sluicekit/sluice/core/throttle"
)

// TestTransportThrottleIgnoresCallsTheCallerCancelled attacks "the
// Transport throttles when an upstream answers 429 or 503, or not at
// all" with callers that give up on calls they no longer need (hedged
// requests, a user who navigated away): an upstream that answers every
// call it is left to answer is healthy, and its client must not throttle
// it. 30 calls are cancelled by their callers once the upstream has them,
// 10 are answered 200; the next 50 calls must all be sent. Before the fix,
// each cancelled call counted as one the upstream did not answer, and the
// Transport rejected 26 of the 50 locally.
func TestTransportThrottleIgnoresCallsTheCallerCancelled(t *testing.T) {
	got := make(chan struct{})
	srv := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			got <- struct{}{}
			<-r.Context().Done() // answers once its caller has gone
			return
		}
		_, _ = io.WriteString(w, "ok")
	}))
	g := newGuard(t)
	th, err := throttle.New(g.Clock().(*clock.Fake))
	require.NoError(t, err)
	c := client(t, g, sluicehttp.WithThrottle(th))
	send := func(ctx context.Context, path string) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+path, nil)
		require.NoError(t, err)
		res, err := c.Do(req)
		if err != nil {
			return err
		}
		_, _ = io.Copy(io.Discard, res.Body)
		return res.Body.Close()
	}
	throttled := 0
	fast := func() {
		err := send(context.Background(), "/fast")
		var te *throttle.Error
		if errors.As(err, &te) {
			throttled++
			return
		}
		require.NoError(t, err)
	}
	for i := range 40 {
		if i%4 == 3 {
			fast()
			continue
		}
		ctx, cancel := context.WithCancel(context.Background())
		errc := make(chan error, 1)
		go func() { errc <- send(ctx, "/slow") }()
		select {
		case <-got:
			cancel()
			require.ErrorIs(t, <-errc, context.Canceled)
		case err := <-errc: // rejected locally
			cancel()
			var te *throttle.Error
			require.ErrorAs(t, err, &te)
		}
	}
	throttled = 0
	for range 50 {
		fast()
	}
	assert.Zero(t, throttled, "calls to a healthy upstream rejected locally, of 50")
}
