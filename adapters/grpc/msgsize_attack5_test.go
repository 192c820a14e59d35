package sluicegrpc_test

import (
	"context"
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

// TestClientThrottleIgnoresMessageSizes: calls whose messages are over a
// size limit (a reply over the client's grpc.MaxCallRecvMsgSize, a request
// over the server's) fail with ResourceExhausted from gRPC itself, which
// says nothing of the server's load: the client's throttle does not count
// them as rejections, and the calls after them, to a healthy server, all
// go through. Before, twenty oversized replies made the throttle reject
// most later calls ("the upstream rejects calls").
func TestClientThrottleIgnoresMessageSizes(t *testing.T) {
	svc, _, conn := serve(t, grpc.MaxRecvMsgSize(1024))
	fc := clock.NewFake(time.Hour)
	th, err := throttle.New(fc)
	require.NoError(t, err)
	c := greeterpb.NewGreeterClient(dial(t, conn.Target(),
		grpc.WithChainUnaryInterceptor(sluicegrpc.UnaryClientInterceptor(newGuard(t, fc), sluicegrpc.WithThrottle(th)))))
	for i := range 20 {
		err := hello(context.Background(), c, strings.Repeat("x", 100), grpc.MaxCallRecvMsgSize(50))
		require.Equal(t, codes.ResourceExhausted, status.Code(err), "call %d: %v", i, err)
		err = hello(context.Background(), c, strings.Repeat("x", 2000))
		require.Equal(t, codes.ResourceExhausted, status.Code(err), "call %d: %v", i, err)
	}
	before := svc.hellos.Load()
	for i := range 20 {
		assert.NoError(t, hello(context.Background(), c, "ok"), "call %d", i)
	}
	assert.Equal(t, before+20, svc.hellos.Load())
}
