package sluicegrpc_test

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"

	sluicegrpc "github.com/sluicekit/sluice/adapters/grpc"
	"github.com/sluicekit/sluice/adapters/grpc/internal/greeterpb"
	"github.com/sluicekit/sluice/core/clock"
	"github.com/sluicekit/sluice/core/throttle"
)

// TestClientThrottleLeavesTheCallersOptionsAlone: a program that calls
// ClientConn.Invoke from many goroutines with one slice of call options
// that has room to spare (a generic proxy's options, built once) owns
// that slice: the throttling client interceptor must not write into it.
// Before, it appended its grpc.Trailer option in place, so concurrent
// calls wrote the same element (a data race, go test -race) and a call
// could read its trailer into another call's variable. Each call's
// options must still be the caller's after the call.
func TestClientThrottleLeavesTheCallersOptionsAlone(t *testing.T) {
	_, _, conn := serve(t)
	fc := clock.NewFake(time.Hour)
	th, err := throttle.New(fc)
	require.NoError(t, err)
	cc := dial(t, conn.Target(), grpc.WithChainUnaryInterceptor(sluicegrpc.UnaryClientInterceptor(newGuard(t, fc), sluicegrpc.WithThrottle(th))))
	opts := make([]grpc.CallOption, 1, 8)
	opts[0] = grpc.WaitForReady(true)
	spare := opts[:cap(opts)]
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 50 {
				var reply greeterpb.HelloReply
				assert.NoError(t, cc.Invoke(ctxT(t), sayHello, &greeterpb.HelloRequest{Name: "x"}, &reply, opts...))
			}
		})
	}
	wg.Wait()
	for i, o := range spare[1:] {
		assert.Nil(t, o, "the caller's option slice was written at %d", i+1)
	}
}
