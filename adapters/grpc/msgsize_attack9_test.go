package sluicegrpc_test

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	sluicegrpc "github.com/sluicekit/sluice/adapters/grpc"
	"github.com/sluicekit/sluice/adapters/grpc/internal/greeterpb"
	"github.com/sluicekit/sluice/core/clock"
	"github.com/sluicekit/sluice/core/throttle"
)

// overloaded answers every call with its own ResourceExhausted.
type overloaded struct {
	greeterpb.UnimplementedGreeterServer
}

func (overloaded) SayHello(context.Context, *greeterpb.HelloRequest) (*greeterpb.HelloReply, error) {
	return nil, status.Error(codes.ResourceExhausted, "overloaded: queue larger than max depth 100")
}

// TestClientThrottleCountsAServersRejectionWordedLikeASizeLimit: a server
// rejecting calls with ResourceExhausted is throttled by the client even
// when the rejection's message has the words of gRPC's own size-limit
// error ("queue larger than max depth"). Before, the client took every
// such rejection for gRPC's message-size error and sent all 200 calls to
// the rejecting server.
func TestClientThrottleCountsAServersRejectionWordedLikeASizeLimit(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := grpc.NewServer()
	greeterpb.RegisterGreeterServer(srv, overloaded{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(lis)
	}()
	t.Cleanup(func() {
		srv.Stop()
		<-done
	})
	fc := clock.NewFake(time.Hour)
	th, err := throttle.New(fc)
	require.NoError(t, err)
	c := greeterpb.NewGreeterClient(dial(t, lis.Addr().String(),
		grpc.WithChainUnaryInterceptor(sluicegrpc.UnaryClientInterceptor(newGuard(t, fc), sluicegrpc.WithThrottle(th)))))
	local := 0
	for range 200 {
		err := hello(ctxT(t), c, "alice")
		switch st := status.Convert(err); st.Code() {
		case codes.Unavailable:
			local++
		case codes.ResourceExhausted:
			require.Contains(t, st.Message(), "larger than max")
		default:
			t.Fatalf("unexpected %v", err)
		}
	}
	assert.GreaterOrEqual(t, local, 180, "the client throttles a server that rejects every call")

	// gRPC's own refusal to send a request over the client's limit is still
	// no rejection by a server.
	_, _, healthy := serve(t)
	th, err = throttle.New(fc)
	require.NoError(t, err)
	c = greeterpb.NewGreeterClient(dial(t, healthy.Target(),
		grpc.WithChainUnaryInterceptor(sluicegrpc.UnaryClientInterceptor(newGuard(t, fc), sluicegrpc.WithThrottle(th)))))
	for i := range 20 {
		err := hello(ctxT(t), c, strings.Repeat("x", 100), grpc.MaxCallSendMsgSize(50))
		require.Equal(t, codes.ResourceExhausted, status.Code(err), "call %d: %v", i, err)
	}
	for i := range 20 {
		assert.NoError(t, hello(ctxT(t), c, "ok"), "call %d", i)
	}
}
