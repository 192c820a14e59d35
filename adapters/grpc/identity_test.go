package sluicegrpc_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	sluicegrpc "github.com/sluicekit/sluice/adapters/grpc"
	"github.com/sluicekit/sluice/adapters/grpc/internal/greeterpb"
	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/clock"
	"github.com/sluicekit/sluice/extractors"
)

// userKey is the context key the test's authentication interceptors store
// the caller's user under.
type userKey struct{}

// authenticated returns ctx with the user of its "authorization" metadata.
func authenticated(ctx context.Context) context.Context {
	if vs := metadata.ValueFromIncomingContext(ctx, "authorization"); len(vs) > 0 {
		return context.WithValue(ctx, userKey{}, vs[0])
	}
	return ctx
}

// authStream is a server stream whose context is authenticated.
type authStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s authStream) Context() context.Context { return s.ctx }

// TestContextParam: a param of extractors.WithContextParam limits by the
// user an authentication interceptor, chained before the Guard's, stored
// in the call's context, on unary calls and streams alike.
func TestContextParam(t *testing.T) {
	fc := clock.NewFake(time.Hour)
	rule := core.Rule{Name: "per-user", Resource: "/sluice.examples.Greeter/*", Kind: core.KindHotspot,
		Param: "user", Limit: 1, Window: time.Second}

	// Without the param registered, the rule is refused.
	_, err := sluicegrpc.New(newGuard(t, fc, rule))
	require.ErrorContains(t, err, `"user" is not a custom param of the gRPC extractor`)

	g := newGuard(t, fc, rule)
	x, err := extractors.New(extractors.WithContextParam("user", userKey{}))
	require.NoError(t, err)
	ic, err := sluicegrpc.New(g, sluicegrpc.WithExtractor(x))
	require.NoError(t, err)
	svc, c, _ := serve(t,
		grpc.ChainUnaryInterceptor(func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			return h(authenticated(ctx), req)
		}, ic.UnaryServer()),
		grpc.ChainStreamInterceptor(func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
			return h(srv, authStream{ServerStream: ss, ctx: authenticated(ss.Context())})
		}, ic.StreamServer()))
	ctx := ctxT(t)
	as := func(user string) context.Context { return metadata.AppendToOutgoingContext(ctx, "authorization", user) }

	require.NoError(t, hello(as("alice"), c, "a"))
	d := decode(t, hello(as("alice"), c, "a"))
	assert.Equal(t, "user", d.info.GetMetadata()["param"])
	require.NoError(t, hello(as("bob"), c, "b"), "bob has a limit of his own")
	for range 3 {
		require.NoError(t, hello(ctx, c, "anonymous"), "no user, no limit")
	}
	s, err := c.Count(as("bob"), &greeterpb.CountRequest{N: 1})
	require.NoError(t, err)
	_, err = s.Recv()
	decode(t, err)
	assert.EqualValues(t, 1+1+3, svc.hellos.Load())
	assert.Zero(t, svc.streams.Load())
}

// nameCost is a cost function: a unary call's cost is the length of its
// name; a stream costs 1.
func nameCost(_ context.Context, _ string, req any) int64 {
	if r, ok := req.(*greeterpb.HelloRequest); ok {
		return int64(len(r.GetName()))
	}
	return 1
}

// TestCost: WithCost makes a call take the permits its request is worth,
// on servers and, before sending, on clients.
func TestCost(t *testing.T) {
	fc := clock.NewFake(time.Hour)
	rule := core.Rule{Name: "greeter-rate", Resource: "/sluice.examples.Greeter/*", Kind: core.KindFlow, Limit: 10, Window: time.Second}
	svc, c, _ := serve(t, guarded(newGuard(t, fc, rule), sluicegrpc.WithCost(nameCost))...)
	ctx := ctxT(t)
	require.NoError(t, hello(ctx, c, "abcdef"))
	decode(t, hello(ctx, c, "abcdef"))
	require.NoError(t, hello(ctx, c, "abc"))
	s, err := c.Count(ctx, &greeterpb.CountRequest{N: 1})
	require.NoError(t, err)
	_, err = s.Recv()
	require.NoError(t, err, "a stream costs 1: the tenth permit")
	decode(t, hello(ctx, c, "a"))
	assert.EqualValues(t, 2, svc.hellos.Load())

	// On a client, a call over its cost never leaves.
	_, _, conn := serve(t)
	client := greeterpb.NewGreeterClient(conn)
	lim := newGuard(t, fc, rule)
	cc := dial(t, conn.Target(), grpc.WithChainUnaryInterceptor(sluicegrpc.UnaryClientInterceptor(lim, sluicegrpc.WithCost(nameCost))))
	limited := greeterpb.NewGreeterClient(cc)
	require.NoError(t, hello(ctx, limited, "abcdefgh"))
	decode(t, hello(ctx, limited, "abc"))
	require.NoError(t, hello(ctx, client, "abc"), "the server was never limited")
}

// TestCostWithParams: a call to a resource whose rule reads a param is
// given its params and its cost together, and a resource whose rules read
// none takes its cost without them (the interceptor gathers params only for
// rules that read them).
func TestCostWithParams(t *testing.T) {
	fc := clock.NewFake(time.Hour)
	perKey := core.Rule{Name: "per-key", Resource: "/sluice.examples.Greeter/SayHello", Kind: core.KindHotspot, Param: "metadata:X-Api-Key", Limit: 8, Window: time.Second}
	rate := core.Rule{Name: "count-rate", Resource: "/sluice.examples.Greeter/Count", Kind: core.KindFlow, Limit: 10, Window: time.Second}
	svc, c, _ := serve(t, guarded(newGuard(t, fc, perKey, rate), sluicegrpc.WithCost(nameCost))...)
	k1 := metadata.AppendToOutgoingContext(ctxT(t), "x-api-key", "k1")
	k2 := metadata.AppendToOutgoingContext(ctxT(t), "x-api-key", "k2")
	require.NoError(t, hello(k1, c, "abcde"), "5 of k1's 8")
	decode(t, hello(k1, c, "abcd"))
	require.NoError(t, hello(k2, c, "abcdefgh"), "k2 has a quota of its own")
	require.NoError(t, hello(k1, c, "abc"), "the last 3 of k1's")
	assert.EqualValues(t, 3, svc.hellos.Load())
	for range 10 {
		s, err := c.Count(k1, &greeterpb.CountRequest{N: 1})
		require.NoError(t, err)
		_, err = s.Recv()
		require.NoError(t, err)
	}
	s, err := c.Count(k1, &greeterpb.CountRequest{N: 1})
	require.NoError(t, err)
	_, err = s.Recv()
	decode(t, err)
}
