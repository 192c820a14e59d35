package sluicegrpc_test

import (
	"context"
	"net"
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

// hangupGreeter answers each call, unary or stream, once the client hangs
// up, with what gRPC handlers return then: status.FromContextError of the
// call's context (Canceled), as a call to another service made with that
// context or a Send on the stream also fail.
type hangupGreeter struct {
	greeterpb.UnimplementedGreeterServer
}

func (hangupGreeter) SayHello(ctx context.Context, _ *greeterpb.HelloRequest) (*greeterpb.HelloReply, error) {
	<-ctx.Done()
	return nil, status.FromContextError(ctx.Err()).Err()
}

func (hangupGreeter) Count(_ *greeterpb.CountRequest, s grpc.ServerStreamingServer[greeterpb.CountReply]) error {
	if err := s.Send(&greeterpb.CountReply{Number: 1}); err != nil {
		return err
	}
	<-s.Context().Done()
	return status.FromContextError(s.Context().Err()).Err()
}

// TestClientsHangingUpOpenNoBreaker: clients call and hang up before the
// answer, ten unary calls and ten streams. Clients giving up say nothing of
// the service's health, and core.Entry.Exit promises that an error breaker
// does not count a caller that gave up. Before, the adapter passed the
// handler's Canceled status on, which wraps no context error: every
// hang-up counted as a failure, and five of them opened the breaker
// against every later caller.
//
// The same holds for the client interceptors, whose caller is the calling
// code: hedged requests cancel their losers, and a user navigating away
// cancels theirs, with the upstream healthy.
func TestClientsHangingUpOpenNoBreaker(t *testing.T) {
	for _, tc := range []struct {
		method string
		client bool
	}{{sayHello, false}, {count, false}, {sayHello, true}, {count, true}} {
		method := tc.method
		fc := clock.NewFake(time.Hour)
		g := newGuard(t, fc, core.Rule{Name: "b", Resource: method, Kind: core.KindBreaker,
			Strategy: "error-ratio", Threshold: 0.5, MinRequests: 5})
		lis, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		var srvOpts []grpc.ServerOption
		var dialOpts []grpc.DialOption
		if tc.client {
			dialOpts = []grpc.DialOption{grpc.WithChainUnaryInterceptor(sluicegrpc.UnaryClientInterceptor(g)),
				grpc.WithChainStreamInterceptor(sluicegrpc.StreamClientInterceptor(g))}
		} else {
			srvOpts = guarded(g)
		}
		srv := grpc.NewServer(srvOpts...)
		greeterpb.RegisterGreeterServer(srv, hangupGreeter{})
		go func() { _ = srv.Serve(lis) }()
		t.Cleanup(srv.Stop)
		c := greeterpb.NewGreeterClient(dial(t, lis.Addr().String(), dialOpts...))

		inFlight := func(n int64) func() bool {
			return func() bool { st, _ := g.Stats(method); return st.InFlight == n }
		}
		for i := range 10 {
			b := g.Snapshot().Rules[0].Breaker
			require.Equal(t, breaker.Closed, b.State, "%+v: after %d hang-ups, %d counted as failures", tc, i, b.Bad)
			ctx, cancel := context.WithCancel(ctxT(t))
			if method == count {
				s, err := c.Count(ctx, &greeterpb.CountRequest{})
				require.NoError(t, err)
				_, err = s.Recv()
				require.NoError(t, err)
			} else {
				go func() { _ = hello(ctx, c, "") }()
				require.Eventually(t, inFlight(1), 10*time.Second, time.Millisecond)
			}
			cancel()
			require.Eventually(t, inFlight(0), 10*time.Second, time.Millisecond)
		}
		assert.Equal(t, breaker.Closed, g.Snapshot().Rules[0].Breaker.State, "%+v", tc)
	}
}

// TestClientDeadlinesStillOpenTheBreaker: on a client, a call that ends
// with DeadlineExceeded is the upstream's slowness, not a caller giving
// up: five of them open an error breaker, as before.
func TestClientDeadlinesStillOpenTheBreaker(t *testing.T) {
	g := newGuard(t, clock.NewFake(time.Hour), core.Rule{Name: "b", Resource: sayHello, Kind: core.KindBreaker,
		Strategy: "error-ratio", Threshold: 0.5, MinRequests: 5})
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := grpc.NewServer()
	greeterpb.RegisterGreeterServer(srv, hangupGreeter{})
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	c := greeterpb.NewGreeterClient(dial(t, lis.Addr().String(), grpc.WithChainUnaryInterceptor(sluicegrpc.UnaryClientInterceptor(g))))
	for range 5 {
		ctx, cancel := context.WithTimeout(ctxT(t), 10*time.Millisecond)
		assert.Equal(t, codes.DeadlineExceeded, status.Code(hello(ctx, c, "")))
		cancel()
	}
	assert.Equal(t, breaker.Open, g.Snapshot().Rules[0].Breaker.State)
}
