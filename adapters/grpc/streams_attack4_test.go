package sluicegrpc_test

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"

	sluicegrpc "github.com/sluicekit/sluice/adapters/grpc"
	"github.com/sluicekit/sluice/adapters/grpc/internal/greeterpb"
	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/clock"
)

// TestAbandonedStreamsReleaseTheirSlots: 1,000 streams, guarded by a
// concurrency rule on both the server and the client, are opened, read
// once and abandoned: their callers read no further and never cancel
// their context, and then close the ClientConn, which gRPC documents as
// enough to release a stream. The server's slots come back as its handlers
// end; before, the client kept its 1,000 slots for ever, so that the
// client's calls to the method were refused from then on, with the
// upstream healthy; now each comes back when gRPC ends the stream (and a
// closed connection is the caller giving up: no failure for breakers).
func TestAbandonedStreamsReleaseTheirSlots(t *testing.T) {
	const n = 1000
	limit := core.Rule{Name: "streams", Resource: count, Kind: core.KindConcurrency, Limit: n}
	breaker := core.Rule{Name: "b", Resource: count, Kind: core.KindBreaker, Strategy: "error-count", Threshold: 1, MinRequests: 1}
	server := newGuard(t, clock.NewFake(time.Hour), limit)
	client := newGuard(t, clock.NewFake(time.Hour), limit, breaker)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := grpc.NewServer(guarded(server)...)
	svc := &testGreeter{release: make(chan struct{})}
	greeterpb.RegisterGreeterServer(srv, svc)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(lis)
	}()
	t.Cleanup(func() {
		srv.Stop()
		<-done
	})
	inFlight := func(g *core.Guard, want int64) func() bool {
		return func() bool { st, _ := g.Stats(count); return st.InFlight == want }
	}
	dialed := func() (*grpc.ClientConn, greeterpb.GreeterClient) {
		conn := dial(t, lis.Addr().String(), grpc.WithChainStreamInterceptor(sluicegrpc.StreamClientInterceptor(client)))
		return conn, greeterpb.NewGreeterClient(conn)
	}
	conn, c := dialed()
	for range n {
		s, err := c.Count(context.Background(), &greeterpb.CountRequest{N: 2, IntervalMs: -1})
		require.NoError(t, err)
		r, err := s.Recv()
		require.NoError(t, err)
		require.EqualValues(t, 1, r.GetNumber())
	}
	require.Eventually(t, inFlight(server, n), 10*time.Second, time.Millisecond)
	st, _ := client.Stats(count)
	require.EqualValues(t, n, st.InFlight)
	require.NoError(t, conn.Close())
	assert.Eventually(t, inFlight(server, 0), 10*time.Second, time.Millisecond, "the server kept slots")
	assert.Eventually(t, inFlight(client, 0), 10*time.Second, time.Millisecond, "the client kept slots")

	_, c = dialed()
	s, err := c.Count(ctxT(t), &greeterpb.CountRequest{N: 1})
	require.NoError(t, err, "the client refuses the method")
	_, err = s.Recv()
	require.NoError(t, err)
}
