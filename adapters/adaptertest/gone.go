package adaptertest

import (
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core"
)

// afterClientLeft is the handler of GET /gone and GET /late: it tells
// s.entered it runs, waits for the request's context to end, advances the
// Guard's clock by 10ms and returns, writing "late" first when write is
// set.
func (s *server) afterClientLeft(write bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s.entered <- struct{}{}
		<-r.Context().Done()
		s.clock.Advance(10 * time.Millisecond)
		if write {
			_, _ = io.WriteString(w, "late")
		}
	}
}

// testClientGone: a client gives up (cancels its request) on a handler
// that waits for the request's context to end, 10ms of the Guard's clock,
// and returns. When the handler writes nothing (GET /gone), the request is
// gone (core.Entry.Exit): a failure, and no completion for a system rule,
// whose average response time stays 0. When it writes a response after the
// client left (GET /late), it is a success, and a completion of 10ms.
func testClientGone(t *testing.T, f factory) {
	for _, tc := range []struct {
		path   string
		errors int64
		avgRT  time.Duration
	}{
		{path: "/gone", errors: 1},
		{path: "/late", avgRT: 10 * time.Millisecond},
	} {
		t.Run(tc.path[1:], func(t *testing.T) {
			s := start(t, f, Options{}, core.Rule{Name: "inflight", Resource: "*", Kind: core.KindSystem, Signal: core.SignalInFlight, Threshold: 100})
			ctx, cancel := context.WithCancel(t.Context())
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.url+tc.path, nil)
			require.NoError(t, err)
			go func() { <-s.entered; cancel() }()
			_, err = s.client.Do(req)
			require.ErrorIs(t, err, context.Canceled)
			// The server reports the request when the adapter has exited it.
			select {
			case <-s.served:
			case <-time.After(10 * time.Second):
				t.Fatal("the request never ended")
			}
			resource := "GET " + tc.path
			assert.Zero(t, s.stats(resource).InFlight)
			assert.Equal(t, tc.errors, s.stats(resource).Error)
			sys := s.guard.Snapshot().Rules[0].System
			assert.Equal(t, int64(1), sys.Pass)
			assert.Equal(t, tc.avgRT, sys.AvgRT)
		})
	}
}
