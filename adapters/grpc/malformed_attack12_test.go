package sluicegrpc_test

import (
	"context"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/sluicekit/sluice/adapters/grpc/internal/greeterpb"
	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/clock"
)

// rawCodec sends a []byte message as it is: a client that writes what it
// likes on the wire.
type rawCodec struct{}

func (rawCodec) Marshal(v any) ([]byte, error) {
	if b, ok := v.([]byte); ok {
		return b, nil
	}
	return nil, fmt.Errorf("rawCodec: %T", v)
}
func (rawCodec) Unmarshal(data []byte, v any) error { return nil }
func (rawCodec) Name() string                       { return "proto" }

// TestMalformedStreamRequestsDoNotOpenTheBreaker: a hostile client sends
// bytes that are no protobuf message as the request of a server-streaming
// method. gRPC fails the stream's RecvMsg, inside the stream interceptor,
// with Internal ("failed to unmarshal the received message"), a code the
// default classifier counts as a server fault: before, 5 such calls opened
// an error-count breaker on the method and every other client got
// Unavailable. A unary method's request is decoded before the interceptor
// runs, so its malformed requests never counted; a stream's must not
// either. The service's own Internal failure still counts.
func TestMalformedStreamRequestsDoNotOpenTheBreaker(t *testing.T) {
	g := newGuard(t, clock.NewFake(time.Hour), core.Rule{Name: "count-breaker", Resource: count, Kind: core.KindBreaker,
		Strategy: "error-count", Threshold: 5, MinRequests: 1})
	svc, c, conn := serve(t, guarded(g)...)
	desc := &grpc.StreamDesc{StreamName: "Count", ServerStreams: true}
	for range 20 {
		s, err := conn.NewStream(ctxT(t), desc, count, grpc.ForceCodec(rawCodec{}))
		require.NoError(t, err)
		require.NoError(t, s.SendMsg([]byte{0xff, 0xff, 0xff})) // field 0, a truncated varint
		require.NoError(t, s.CloseSend())
		var reply []byte
		err = s.RecvMsg(&reply)
		require.Equal(t, codes.Internal, status.Code(err), "%v", err)
	}
	assert.Zero(t, svc.streams.Load(), "the service saw a malformed request")

	s, err := c.Count(ctxT(t), &greeterpb.CountRequest{N: 1})
	require.NoError(t, err)
	_, err = s.Recv()
	require.NoError(t, err, "a good client after 20 malformed requests of another")
	_, err = s.Recv()
	require.ErrorIs(t, err, io.EOF)
	st, _ := g.Stats(count)
	assert.Zero(t, st.Total.Error, "malformed requests counted as failures")

	// The service's own failure is a failure.
	s, err = c.Count(context.Background(), &greeterpb.CountRequest{N: -1})
	require.NoError(t, err)
	_, err = s.Recv()
	require.Equal(t, codes.Internal, status.Code(err))
	require.Eventually(t, func() bool { st, _ := g.Stats(count); return st.Total.Error == 1 }, 10*time.Second, time.Millisecond)
}
