package sluicehttp_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	sluicehttp "github.com/sluicekit/sluice/adapters/nethttp"
	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/breaker"
)

// TestTransportTimeoutsOpenTheBreaker: an upstream that hangs, called
// through the Transport with a 10ms deadline per call. A transport error
// is a failure for breakers (NewTransport), and a deadline that passes
// while the upstream says nothing is the upstream's slowness, the failure
// a client's breaker exists for: five of them open it. Before, the error
// wrapped context.DeadlineExceeded and Exit took the call for one its
// caller gave up: the breaker never opened, and every call kept waiting
// out its deadline. A call its caller cancels is not counted.
func TestTransportTimeoutsOpenTheBreaker(t *testing.T) {
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	t.Cleanup(upstream.Close)
	for _, cancelled := range []bool{true, false} {
		g, err := core.New(core.WithLogger(slog.New(slog.DiscardHandler)), core.WithRules(core.Rule{Name: "b", Resource: "*", Kind: core.KindBreaker,
			Strategy: "error-ratio", Threshold: 0.5, MinRequests: 5}))
		require.NoError(t, err)
		t.Cleanup(func() { _ = g.Close() })
		tr, err := sluicehttp.NewTransport(g, nil)
		require.NoError(t, err)
		c := &http.Client{Transport: tr}
		for range 5 {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
			if cancelled {
				ctx, cancel = context.WithCancel(context.Background())
				time.AfterFunc(10*time.Millisecond, cancel)
			}
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, upstream.URL, nil)
			require.NoError(t, err)
			_, err = c.Do(req)
			require.Error(t, err)
			cancel()
		}
		want := breaker.Open
		if cancelled {
			want = breaker.Closed
		}
		assert.Equal(t, want, g.Snapshot().Rules[0].Breaker.State, "cancelled %v", cancelled)
	}
}
