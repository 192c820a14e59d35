package sluicegrpc_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/metadata"

	sluicegrpc "github.com/sluicekit/sluice/adapters/grpc"
	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/clock"
	"github.com/sluicekit/sluice/extractors"
)

// TestExtractorDeclaredOnce checks that an Extractor given to the Guard
// alone (core.WithParamSource) is the one interceptors given none read
// params with, over a loopback server: its custom params and trusted
// proxies apply, spoofed forwarding metadata from a peer it does not trust
// is ignored, and interceptors given another Extractor, or none when the
// Guard has two, are refused.
func TestExtractorDeclaredOnce(t *testing.T) {
	ctx := ctxT(t)
	newExtractor := func(opts ...extractors.Option) *extractors.Extractor {
		x, err := extractors.New(opts...)
		require.NoError(t, err)
		return x
	}
	guard := func(x *extractors.Extractor, r core.Rule) *core.Guard {
		g, err := core.New(core.WithClock(clock.NewFake(time.Hour)), core.WithParamSource(x), core.WithRules(r))
		require.NoError(t, err)
		return g
	}
	userOf := func(ctx context.Context, _ string) []string { return metadata.ValueFromIncomingContext(ctx, "x-user") }
	x := newExtractor(extractors.WithTrustedProxies("127.0.0.1"), extractors.WithGRPCParam("user", userOf))
	perUser := core.Rule{Name: "per-user", Resource: sayHello, Kind: core.KindHotspot, Param: "user", Limit: 2, Window: time.Second}
	perIP := core.Rule{Name: "per-ip", Resource: sayHello, Kind: core.KindHotspot, Param: "ip", Limit: 2, Window: time.Second}
	as := func(key, value string) context.Context { return metadata.AppendToOutgoingContext(ctx, key, value) }
	forwarded := func(i int) context.Context { return as("x-forwarded-for", "203.0.113."+strconv.Itoa(i)) }

	t.Run("custom param", func(t *testing.T) {
		_, c, _ := serve(t, guarded(guard(x, perUser))...)
		require.NoError(t, hello(as("x-user", "alice"), c, "a"))
		require.NoError(t, hello(as("x-user", "alice"), c, "a"))
		assert.Equal(t, "per-user", decode(t, hello(as("x-user", "alice"), c, "a")).info.GetMetadata()["rule"])
		require.NoError(t, hello(as("x-user", "bob"), c, "a"), "bob has a limit of his own")
	})
	t.Run("trusted proxy", func(t *testing.T) {
		_, c, _ := serve(t, guarded(guard(x, perIP))...)
		require.NoError(t, hello(forwarded(1), c, "a"))
		require.NoError(t, hello(forwarded(1), c, "a"))
		assert.Equal(t, "per-ip", decode(t, hello(forwarded(1), c, "a")).info.GetMetadata()["rule"])
		require.NoError(t, hello(forwarded(2), c, "a"), "another forwarded client")
	})
	t.Run("untrusted peer", func(t *testing.T) {
		// Trusting only 10.0.0.0/8, the loopback client's forwarding
		// metadata is a spoof: it is one client whatever it claims.
		_, c, _ := serve(t, guarded(guard(newExtractor(extractors.WithTrustedProxies("10.0.0.0/8")), perIP))...)
		require.NoError(t, hello(forwarded(1), c, "a"))
		require.NoError(t, hello(forwarded(2), c, "a"))
		assert.Equal(t, "per-ip", decode(t, hello(forwarded(3), c, "a")).info.GetMetadata()["rule"])
	})
	t.Run("refused", func(t *testing.T) {
		g := guard(x, perUser)
		_, err := sluicegrpc.New(g, sluicegrpc.WithExtractor(x))
		require.NoError(t, err, "the Guard's own Extractor, given again, is redundant")
		_, err = sluicegrpc.New(g, sluicegrpc.WithExtractor(newExtractor()))
		require.EqualError(t, err, "sluicegrpc: WithExtractor: the Guard was given another Extractor (core.WithParamSource), and the adapter would read params otherwise: give the Extractor once, to the Guard, or give the Guard this one too")
		require.NoError(t, g.AddParamSource(newExtractor()))
		_, err = sluicegrpc.New(g)
		require.EqualError(t, err, "sluicegrpc: the Guard was given 2 Extractors (core.WithParamSource): give the adapter the one it reads params with (WithExtractor)")
		assert.Panics(t, func() { sluicegrpc.UnaryServerInterceptor(g) })
	})
}
