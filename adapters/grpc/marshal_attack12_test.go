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
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	sluicegrpc "github.com/sluicekit/sluice/adapters/grpc"
	"github.com/sluicekit/sluice/adapters/grpc/internal/greeterpb"
	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/clock"
)

// TestRequestsTheClientCannotMarshalOpenNoBreaker: a service calls its
// upstream through the client interceptors, under an error-count breaker,
// with names its own users send; one user's name is not valid UTF-8, which
// a proto3 string cannot hold, so gRPC fails the call before sending it,
// with Internal ("grpc: error while marshaling"); another's, with an
// accent, goes in metadata, which gRPC refuses outside printable ASCII,
// with Internal too. That is the caller's request, not the upstream
// failing (as an upload whose body cannot be read is the caller's, for
// the HTTP Transport): before, 5 such calls opened the breaker and every
// other user's call to the healthy upstream got Unavailable. The upstream
// failing still counts.
func TestRequestsTheClientCannotMarshalOpenNoBreaker(t *testing.T) {
	client := newGuard(t, clock.NewFake(time.Hour), core.Rule{Name: "upstream", Resource: "/sluice.examples.Greeter/*", Kind: core.KindBreaker,
		Strategy: "error-count", Threshold: 5, MinRequests: 1})
	svc, _, conn := serve(t)
	c := greeterpb.NewGreeterClient(dial(t, conn.Target(),
		grpc.WithChainUnaryInterceptor(sluicegrpc.UnaryClientInterceptor(client))))
	for range 10 {
		err := hello(ctxT(t), c, "bad \xff name")
		require.Equal(t, codes.Internal, status.Code(err), "%v", err)
	}
	assert.Zero(t, svc.hellos.Load(), "a call reached the upstream")
	require.NoError(t, hello(ctxT(t), c, "alice"), "another user's call")

	// Metadata gRPC does not send (a user's name with an accent, outside
	// printable ASCII): Internal before the call leaves, unary or stream.
	sc := greeterpb.NewGreeterClient(dial(t, conn.Target(),
		grpc.WithChainUnaryInterceptor(sluicegrpc.UnaryClientInterceptor(client)),
		grpc.WithChainStreamInterceptor(sluicegrpc.StreamClientInterceptor(client))))
	for range 10 {
		ctx := metadata.AppendToOutgoingContext(ctxT(t), "x-user-name", "José")
		require.Equal(t, codes.Internal, status.Code(hello(ctx, sc, "jose")))
		_, err := sc.Count(ctx, &greeterpb.CountRequest{N: 1})
		require.Equal(t, codes.Internal, status.Code(err), "%v", err)
	}
	assert.EqualValues(t, 1, svc.hellos.Load()+svc.streams.Load(), "a call reached the upstream (but alice's)")
	require.NoError(t, hello(ctxT(t), sc, "alice"), "another user's call")

	for range 5 {
		require.Equal(t, codes.Internal, status.Code(hello(ctxT(t), c, "fail")))
	}
	assert.Equal(t, codes.Unavailable, status.Code(hello(ctxT(t), c, "alice")), "an upstream failing opens the breaker")

	// An upstream whose answer cannot be marshaled fails with gRPC's same
	// words: that is the upstream failing.
	client = newGuard(t, clock.NewFake(time.Hour), core.Rule{Name: "upstream", Resource: sayHello, Kind: core.KindBreaker,
		Strategy: "error-count", Threshold: 5, MinRequests: 1})
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := grpc.NewServer()
	greeterpb.RegisterGreeterServer(srv, badReplies{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(lis)
	}()
	t.Cleanup(func() {
		srv.Stop()
		<-done
	})
	c = greeterpb.NewGreeterClient(dial(t, lis.Addr().String(), grpc.WithChainUnaryInterceptor(sluicegrpc.UnaryClientInterceptor(client))))
	for range 5 {
		err := hello(ctxT(t), c, "alice")
		require.Equal(t, codes.Internal, status.Code(err), "%v", err)
		require.Contains(t, err.Error(), "grpc: error while marshaling")
	}
	assert.Equal(t, codes.Unavailable, status.Code(hello(ctxT(t), c, "alice")), "an upstream failing opens the breaker")
}

// badReplies answers every SayHello with a reply that cannot be marshaled.
type badReplies struct {
	greeterpb.UnimplementedGreeterServer
}

func (badReplies) SayHello(context.Context, *greeterpb.HelloRequest) (*greeterpb.HelloReply, error) {
	return &greeterpb.HelloReply{Message: "\xff"}, nil
}
