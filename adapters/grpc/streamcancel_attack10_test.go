package sluicegrpc_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	sluicegrpc "github.com/sluicekit/sluice/adapters/grpc"
	"github.com/sluicekit/sluice/adapters/grpc/internal/greeterpb"
	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/breaker"
	"github.com/sluicekit/sluice/core/clock"
)

// TestStreamsCancelledMidStreamReleaseAndOpenNothing: 2,000 server
// streams, guarded on both sides by a concurrency rule and by breakers
// that trip on one failure or on half of the calls slower than 1ms, are
// opened, read once and cancelled by their callers mid-stream, with the
// fake clock moved 1s while they run (each stream is slow). Every slot
// comes back on both sides, the error breakers stay closed (a cancelled
// stream is its caller's doing), the slow-ratio ones open (a stream that
// ran 1s before its caller left was slow), and a new stream is refused by
// them only.
func TestStreamsCancelledMidStreamReleaseAndOpenNothing(t *testing.T) {
	const n = 2000
	limit := core.Rule{Name: "streams", Resource: count, Kind: core.KindConcurrency, Limit: n}
	errs := core.Rule{Name: "errors", Resource: count, Kind: core.KindBreaker, Strategy: "error-count", Threshold: 1, MinRequests: 1}
	slow := core.Rule{Name: "slow", Resource: count, Kind: core.KindBreaker, Strategy: "slow-ratio", MaxRT: time.Millisecond, Threshold: 0.5, MinRequests: 10}
	fc := clock.NewFake(time.Hour)
	server := newGuard(t, fc, limit, errs, slow)
	client := newGuard(t, fc, limit, errs, slow)
	_, _, conn := serve(t, guarded(server)...)
	c := greeterpb.NewGreeterClient(dial(t, conn.Target(), grpc.WithChainStreamInterceptor(sluicegrpc.StreamClientInterceptor(client))))
	inFlight := func(g *core.Guard, want int64) func() bool {
		return func() bool { st, _ := g.Stats(count); return st.InFlight == want }
	}
	cancels := make([]context.CancelFunc, 0, n)
	for range n {
		ctx, cancel := context.WithCancel(context.Background())
		cancels = append(cancels, cancel)
		s, err := c.Count(ctx, &greeterpb.CountRequest{N: 2, IntervalMs: -1})
		require.NoError(t, err)
		_, err = s.Recv()
		require.NoError(t, err)
	}
	require.Eventually(t, inFlight(server, n), 20*time.Second, time.Millisecond)
	fc.Advance(time.Second)
	for _, cancel := range cancels {
		cancel()
	}
	assert.Eventually(t, inFlight(server, 0), 20*time.Second, time.Millisecond, "the server kept slots")
	assert.Eventually(t, inFlight(client, 0), 20*time.Second, time.Millisecond, "the client kept slots")
	for _, g := range []*core.Guard{server, client} {
		for _, r := range g.Snapshot().Rules {
			if r.Breaker == nil {
				continue
			}
			want := breaker.Closed
			if r.Rule.Name == "slow" {
				want = breaker.Open
			}
			assert.Equal(t, want, r.Breaker.State, "%s: %+v", r.Rule.Name, *r.Breaker)
		}
	}
	s, err := c.Count(ctxT(t), &greeterpb.CountRequest{N: 1})
	if err == nil {
		_, err = s.Recv()
	}
	assert.Equal(t, codes.Unavailable, status.Code(err), "%v", err)
}
