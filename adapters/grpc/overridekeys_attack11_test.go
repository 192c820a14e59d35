package sluicegrpc_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/metadata"

	sluicegrpc "github.com/sluicekit/sluice/adapters/grpc"
	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/clock"
)

// TestOverrideKeysTheExtractorNeverYieldsAreRefused: on gRPC the method
// param is the call's full method and metadata values are split at commas
// (but "-bin" keys): an override for "SayHello" (not "/pkg.Service/SayHello")
// or for " vip" can never apply, and sluicegrpc.New refuses it, naming
// rule, field and key; the full method's override applies.
func TestOverrideKeysTheExtractorNeverYieldsAreRefused(t *testing.T) {
	for _, c := range []struct{ param, key, says string }{
		{"method", "SayHello", "a call's full method"},
		{"metadata:x-user", " vip", "split at commas"},
		{"metadata:x-user", "a,b", "split at commas"},
	} {
		g := newGuard(t, clock.NewFake(time.Hour), core.Rule{Name: "r", Resource: "*", Kind: core.KindHotspot, Param: c.param, Limit: 1,
			Overrides: map[string]int64{c.key: 100}})
		_, err := sluicegrpc.New(g)
		require.Error(t, err, c.key)
		assert.Contains(t, err.Error(), "rules[0] (r): overrides key "+core.Quote(c.key)+" can never apply")
		assert.Contains(t, err.Error(), c.says)
	}
	g := newGuard(t, clock.NewFake(time.Hour), core.Rule{Name: "r", Resource: "*", Kind: core.KindHotspot, Param: "method", Limit: 1,
		Overrides: map[string]int64{sayHello: 3}}, core.Rule{Name: "bin", Resource: "*", Kind: core.KindHotspot, Param: "metadata:x-key-bin", Limit: 10,
		Overrides: map[string]int64{"a,b": 10}})
	_, c, _ := serve(t, guarded(g)...)
	ctx := metadata.AppendToOutgoingContext(ctxT(t), "x-key-bin", "a,b")
	for i := range 3 {
		require.NoError(t, hello(ctx, c, "alice"), "call %d within the override of 3", i)
	}
	require.Error(t, hello(ctx, c, "alice"))
}
