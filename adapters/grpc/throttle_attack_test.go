package sluicegrpc_test

import (
	"context"
	"sync/atomic"
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

// TestClientThrottleCountsNoAnswerNotCancels attacks the throttle's
// promise (package throttle: a call rejected "for overload ... or no
// answer") through the client interceptor, with a server that answers
// in three ways by the request's name: "hang" never answers (the call
// ends at its 20ms deadline), "reject" is refused ResourceExhausted at
// once, and "hold" waits until its caller cancels it.
//
//   - 100 calls that all end at their deadline: the server, which answers
//     none, gets at most 20 of them. Before the fix a deadline counted as
//     an accepted call, and all 100 reached it.
//   - 200 calls, one in four "reject", the others cancelled by their
//     caller once the server has them: the rejected calls are throttled
//     as if the cancelled ones were not there, at most 20 of the 50 reach
//     the server. Before the fix each cancelled call counted as accepted,
//     and all 50 did.
func TestClientThrottleCountsNoAnswerNotCancels(t *testing.T) {
	stop := make(chan struct{})
	got := make(chan struct{})
	var hangs, rejects atomic.Int64
	server := func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		switch req.(*greeterpb.HelloRequest).GetName() {
		case "hang":
			hangs.Add(1)
			<-stop
		case "reject":
			rejects.Add(1)
			return nil, status.Error(codes.ResourceExhausted, "overloaded")
		case "hold":
			got <- struct{}{}
		}
		return h(ctx, req)
	}
	_, _, conn := serve(t, grpc.ChainUnaryInterceptor(server))
	t.Cleanup(func() { close(stop) }) // before the server stops

	newClient := func() greeterpb.GreeterClient {
		fc := clock.NewFake(time.Hour)
		th, err := throttle.New(fc)
		require.NoError(t, err)
		return greeterpb.NewGreeterClient(dial(t, conn.Target(),
			grpc.WithChainUnaryInterceptor(sluicegrpc.UnaryClientInterceptor(newGuard(t, fc), sluicegrpc.WithThrottle(th)))))
	}

	c := newClient()
	for range 100 {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		err := hello(ctx, c, "hang")
		cancel()
		assert.Contains(t, []codes.Code{codes.DeadlineExceeded, codes.Unavailable}, status.Code(err), "%v", err)
	}
	t.Logf("a server that answers nothing got %d of 100 calls", hangs.Load())
	assert.LessOrEqual(t, hangs.Load(), int64(20), "calls that got no answer throttle")

	c = newClient()
	for i := range 200 {
		if i%4 == 0 {
			_ = hello(context.Background(), c, "reject")
			continue
		}
		ctx, cancel := context.WithCancel(context.Background())
		errc := make(chan error, 1)
		go func() { errc <- hello(ctx, c, "hold") }()
		select {
		case <-got:
			cancel()
			assert.Equal(t, codes.Canceled, status.Code(<-errc))
		case err := <-errc: // rejected locally
			cancel()
			assert.Equal(t, codes.Unavailable, status.Code(err), "%v", err)
		}
	}
	t.Logf("a server that rejects every call it answers got %d of 50", rejects.Load())
	assert.LessOrEqual(t, rejects.Load(), int64(20), "calls the caller cancelled are no accepted calls")
}
