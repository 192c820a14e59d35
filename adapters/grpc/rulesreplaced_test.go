package sluicegrpc_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	sluicegrpc "github.com/sluicekit/sluice/adapters/grpc"
	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/clock"
)

// Rules that read no params, and rules that read a param the calls carry
// and reject a call without it.
var (
	noParams = core.Rule{Name: "rate", Resource: sayHello, Kind: core.KindFlow, Limit: 1_000_000, Window: time.Second}
	perUser  = core.Rule{Name: "per-user", Resource: sayHello, Kind: core.KindHotspot, Param: "metadata:x-user-id",
		Limit: 1, Window: time.Second, OnMissing: core.MissingReject}
)

// TestParamsWhenRulesReplaced checks that a call entering while SetRules
// replaces rules that read no params with rules that read them is decided
// with its params. The cost function (WithCost) runs after the interceptor
// names the call's resource and before the Guard decides; replacing the
// rules there, it stands for a SetRules at that moment: an interceptor that
// asked the rules in force whether to gather params before it (the
// withdrawn Guard.ReadsParams) decides that call without its metadata, and
// per-user rejects it as a call that can never pass.
func TestParamsWhenRulesReplaced(t *testing.T) {
	g := newGuard(t, clock.NewFake(time.Hour), noParams)
	var replace atomic.Bool
	replace.Store(true)
	cost := func(context.Context, string, any) int64 {
		if replace.CompareAndSwap(true, false) {
			assert.NoError(t, g.SetRules([]core.Rule{perUser}))
		}
		return 1
	}
	svc, c, _ := serve(t, guarded(g, sluicegrpc.WithCost(cost))...)
	alice := metadata.AppendToOutgoingContext(ctxT(t), "x-user-id", "alice")
	require.NoError(t, hello(alice, c, "a"), "per-user read alice's metadata")
	d := decode(t, hello(alice, c, "a"))
	assert.Equal(t, sluicegrpc.ReasonRateLimited, d.info.GetReason(), "alice used her quota")
	assert.EqualValues(t, 1, svc.hellos.Load())
}

// TestParamsWhileRulesChange makes calls carrying their param while another
// goroutine keeps replacing rules that read no params with rules that read
// it (and reject a call without it), and back: no call may be rejected.
func TestParamsWhileRulesChange(t *testing.T) {
	lots := perUser
	lots.Limit = 1_000_000
	g := newGuard(t, clock.NewFake(time.Hour), noParams)
	_, c, _ := serve(t, guarded(g)...)
	ctx := ctxT(t)
	stop := make(chan struct{})
	flipped := make(chan int)
	go func() {
		n := 0
		defer func() { flipped <- n }()
		for sets := [2][]core.Rule{{lots}, {noParams}}; ; n++ {
			select {
			case <-stop:
				return
			default:
			}
			if err := g.SetRules(sets[n%2]); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	var wg sync.WaitGroup
	for u := range 4 {
		wg.Go(func() {
			md := metadata.AppendToOutgoingContext(ctx, "x-user-id", "user-"+string(rune('a'+u)))
			for range 150 {
				if err := hello(md, c, "c"); status.Code(err) != codes.OK {
					t.Errorf("a call with its param was rejected: %v", err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	assert.Positive(t, <-flipped, "the rules were replaced while the calls ran")
}
