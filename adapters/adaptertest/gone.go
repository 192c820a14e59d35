package adaptertest

import (
	"context"
	"errors"
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

// testErrorAfterHangUp: handlers whose clients hang up report what their
// downstream call then fails with (Options.Fail): a gRPC client's Canceled
// status, which wraps no context error, or a 502. A failure reported
// after the client left is "gone" (core.Entry.Exit) in every HTTP adapter,
// so that hang-ups cannot open an error breaker; before, in gin and echo,
// the same failure with an error attached counted, and six clients hanging
// up opened the breaker against every later caller. The failures still
// count as errors in the statistics.
func testErrorAfterHangUp(t *testing.T, f factory) {
	for _, downstream := range []error{errors.New("rpc error: code = Canceled desc = context canceled"), ErrBadGateway} {
		t.Run(downstream.Error(), func(t *testing.T) {
			fail := func(r *http.Request) error {
				if r.URL.Path == "/gone" {
					return downstream
				}
				return nil
			}
			s := start(t, f, Options{Fail: fail}, core.Rule{Name: "b", Resource: "*", Kind: core.KindBreaker,
				Strategy: "error-ratio", Threshold: 0.5, MinRequests: 5})
			for i := range 6 {
				ctx, cancel := context.WithCancel(t.Context())
				req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.url+"/gone", nil)
				require.NoError(t, err)
				done := make(chan struct{})
				go func() {
					defer close(done)
					if res, err := s.client.Do(req); err == nil {
						res.Body.Close()
					}
				}()
				select {
				case <-s.entered:
				case <-done:
					cancel()
					t.Fatalf("the breaker opened after %d hang-ups reporting %v", i, downstream)
				}
				cancel()
				<-done
				select { // the server reports the request when the adapter has exited it
				case <-s.served:
				case <-time.After(10 * time.Second):
					t.Fatal("the request never ended")
				}
			}
			assert.Zero(t, s.stats("GET /gone").InFlight)
			assert.Equal(t, int64(6), s.stats("GET /gone").Total.Error)
			assert.Equal(t, http.StatusOK, s.get("/hello").status, "the breaker opened on hang-ups: %v", downstream)
		})
	}
}
