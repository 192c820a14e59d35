package sluicegrpc_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/metadata"

	"github.com/sluicekit/sluice/adapters/grpc/internal/greeterpb"
	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/clock"
)

// TestClientsHangingUpReleaseTheirSlots: 30 calls of 10 users, a third of
// them with 5000-byte binary user IDs (one value once cut to 256 bytes,
// in -bin metadata), held by the handler under a concurrency rule and a
// per-user one; their client connection is closed mid-call: every slot
// comes back, and each user gets in again on a new connection.
func TestClientsHangingUpReleaseTheirSlots(t *testing.T) {
	fc := clock.NewFake(time.Hour)
	g := newGuard(t, fc,
		core.Rule{Name: "all", Resource: sayHello, Kind: core.KindConcurrency, Limit: 100},
		core.Rule{Name: "user", Resource: sayHello, Kind: core.KindHotspot, Param: "metadata:x-user-bin", Algorithm: core.AlgorithmConcurrency, Limit: 1})
	_, _, conn := serve(t, guarded(g)...)
	inFlight := func(n int64) func() bool {
		return func() bool { st, _ := g.Stats(sayHello); return st.InFlight == n }
	}
	call := func(c greeterpb.GreeterClient, user string) {
		ctx := metadata.AppendToOutgoingContext(context.Background(), "x-user-bin", user)
		_, _ = c.SayHello(ctx, &greeterpb.HelloRequest{Name: "hold"})
	}
	dropped := dial(t, conn.Target())
	long := strings.Repeat("\xff\x00", 2500)
	for i := range 30 {
		user := "u" + strconv.Itoa(i%10)
		if i%3 == 0 {
			user = long + user
		}
		go call(greeterpb.NewGreeterClient(dropped), user)
	}
	// One call of each user in flight, and one of the long IDs.
	require.Eventually(t, inFlight(11), 10*time.Second, 5*time.Millisecond)
	require.NoError(t, dropped.Close())
	require.Eventually(t, inFlight(0), 10*time.Second, 5*time.Millisecond, "slots kept by a connection gone")

	again := greeterpb.NewGreeterClient(dial(t, conn.Target()))
	for i := range 10 {
		go call(again, "u"+strconv.Itoa(i))
	}
	require.Eventually(t, inFlight(10), 10*time.Second, 5*time.Millisecond, "a user kept out")
}
