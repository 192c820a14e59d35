package sluicegrpc_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	sluicegrpc "github.com/sluicekit/sluice/adapters/grpc"
	"github.com/sluicekit/sluice/adapters/grpc/internal/greeterpb"
	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/clock"
	"github.com/sluicekit/sluice/core/throttle"
)

// TestClientThrottle runs a server whose Guard rejects every call, and a
// client that throttles: few calls reach the server, the rest are
// rejected locally with Unavailable; a server's RetryInfo pauses the
// calls; streams are throttled too.
func TestClientThrottle(t *testing.T) {
	srvClock := clock.NewFake(time.Hour)
	srvGuard := newGuard(t, srvClock,
		core.Rule{Name: "no-hellos", Resource: sayHello, Kind: core.KindFlow, Limit: 0},
		core.Rule{Name: "no-counts", Resource: count, Kind: core.KindFlow, Limit: 0},
	)
	var reached atomic.Int64
	counting := func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		reached.Add(1)
		return h(ctx, req)
	}
	countingStreams := func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
		reached.Add(1)
		return h(srv, ss)
	}
	_, _, conn := serve(t,
		grpc.ChainUnaryInterceptor(counting, sluicegrpc.UnaryServerInterceptor(srvGuard)),
		grpc.ChainStreamInterceptor(countingStreams, sluicegrpc.StreamServerInterceptor(srvGuard)))

	fc := clock.NewFake(time.Hour)
	g := newGuard(t, fc)
	th, err := throttle.New(fc)
	require.NoError(t, err)
	c := greeterpb.NewGreeterClient(dial(t, conn.Target(),
		grpc.WithChainUnaryInterceptor(sluicegrpc.UnaryClientInterceptor(g, sluicegrpc.WithThrottle(th))),
		grpc.WithChainStreamInterceptor(sluicegrpc.StreamClientInterceptor(g, sluicegrpc.WithThrottle(th))),
	))
	ctx := ctxT(t)

	local := 0
	for range 200 {
		err := hello(ctx, c, "alice")
		switch st := status.Convert(err); st.Code() {
		case codes.Unavailable:
			assert.Contains(t, st.Message(), "throttled by the client")
			local++
		case codes.ResourceExhausted:
		default:
			t.Fatalf("unexpected %v", err)
		}
	}
	// Every call is counted in the throttle's window and none accepted, so
	// the share rejected grows with the calls counted, and a call goes each
	// time the shares let through add up to one: 3 or 4 reach the server;
	// all 200 is what no throttling gives.
	t.Logf("the server got %d of 200 calls", reached.Load())
	assert.Equal(t, int64(200-local), reached.Load())
	assert.LessOrEqual(t, reached.Load(), int64(20))

	// Streams: the server rejects them; after a few, the client does.
	reached.Store(0)
	local = 0
	for range 50 {
		s, err := c.Count(ctx, &greeterpb.CountRequest{N: 1})
		if err == nil {
			_, err = s.Recv()
		}
		if status.Code(err) == codes.Unavailable {
			local++
		} else {
			assert.Equal(t, codes.ResourceExhausted, status.Code(err))
		}
	}
	// As above: 3 of 50.
	assert.Equal(t, int64(50-local), reached.Load())
	assert.LessOrEqual(t, reached.Load(), int64(20))

	// A RetryInfo pauses the resource for that long.
	require.NoError(t, srvGuard.SetRules([]core.Rule{{Name: "one-a-minute", Resource: sayHello, Kind: core.KindFlow,
		Algorithm: core.AlgorithmTokenBucket, Limit: 1, Window: time.Minute}}))
	fc.Advance(2 * time.Minute) // the throttle's default window: forget the rejections above
	require.NoError(t, hello(ctx, c, "bob"))
	require.Equal(t, codes.ResourceExhausted, status.Code(hello(ctx, c, "bob")))
	reached.Store(0)
	fc.Advance(20 * time.Second)
	st := status.Convert(hello(ctx, c, "bob"))
	assert.Equal(t, codes.Unavailable, st.Code())
	require.Len(t, st.Details(), 1)
	ri, ok := st.Details()[0].(*errdetails.RetryInfo)
	require.True(t, ok, "%T", st.Details()[0])
	assert.Equal(t, 40*time.Second, ri.GetRetryDelay().AsDuration())
	assert.Zero(t, reached.Load(), "a paused call stays in the client")
}
