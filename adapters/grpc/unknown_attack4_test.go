package sluicegrpc_test

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	sluicegrpc "github.com/sluicekit/sluice/adapters/grpc"
	"github.com/sluicekit/sluice/adapters/grpc/internal/greeterpb"
	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/clock"
	"github.com/sluicekit/sluice/extractors"
)

// TestUnknownMethodsShareOneResource: a server with
// grpc.UnknownServiceHandler (a gRPC proxy, or a server answering
// everything itself) passes every method a client names to the stream
// interceptor. Before, each raw method name became a resource, so a client
// sending random names filled the Guard up to WithMaxResources and pushed
// the server's real methods into the overflow statistics; and no rule could
// limit the unknown methods together. Now every method the server does not
// register, in an unknown service or a registered one, is
// extractors.Unmatched, as HTTP requests no route matched are, while
// registered methods keep their names.
func TestUnknownMethodsShareOneResource(t *testing.T) {
	g, err := core.New(core.WithClock(clock.NewFake(time.Hour)), core.WithMaxResources(64),
		core.WithRules(core.Rule{Name: "unknown", Resource: extractors.Unmatched, Kind: core.KindFlow, Limit: 150, Window: time.Minute}))
	require.NoError(t, err)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	unknown := func(_ any, ss grpc.ServerStream) error {
		m, _ := grpc.MethodFromServerStream(ss)
		return status.Error(codes.Unimplemented, m)
	}
	srv := grpc.NewServer(append(guarded(g), grpc.UnknownServiceHandler(unknown))...)
	greeterpb.RegisterGreeterServer(srv, &testGreeter{release: make(chan struct{})})
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(lis)
	}()
	t.Cleanup(func() {
		srv.Stop()
		<-done
	})
	conn := dial(t, lis.Addr().String())
	ctx := ctxT(t)

	rnd := rand.New(rand.NewPCG(1, 2))
	codesSeen := map[codes.Code]int{}
	for i := range 200 {
		var method string
		switch i % 3 {
		case 0: // an unknown service
			method = fmt.Sprintf("/evil%d.Service%x/M", i, rnd.Uint64())
		case 1: // an unknown method of a registered service
			method = fmt.Sprintf("/sluice.examples.Greeter/Nope%x", rnd.Uint64())
		default: // markup, for the dashboard
			method = fmt.Sprintf("/<script>%x</script>/%x", rnd.Uint64(), rnd.Uint64())
		}
		var err error
		if i%2 == 0 {
			err = conn.Invoke(ctx, method, &greeterpb.HelloRequest{Name: "x"}, new(greeterpb.HelloReply))
		} else {
			var s grpc.ClientStream
			s, err = conn.NewStream(ctx, &grpc.StreamDesc{ServerStreams: true, ClientStreams: true}, method)
			require.NoError(t, err)
			require.NoError(t, s.CloseSend())
			err = s.RecvMsg(new(greeterpb.HelloReply))
			require.NotEqual(t, io.EOF, err)
		}
		codesSeen[status.Code(err)]++
	}
	// The first 150 reached the handler, the other 50 shared one limit.
	assert.Equal(t, map[codes.Code]int{codes.Unimplemented: 150, codes.ResourceExhausted: 50}, codesSeen)
	require.NoError(t, hello(ctx, greeterpb.NewGreeterClient(conn), "ok"))

	var names []string
	for _, r := range g.Snapshot().Resources {
		names = append(names, r.Resource)
	}
	assert.ElementsMatch(t, []string{extractors.Unmatched, sayHello}, names)
	st, ok := g.Stats(extractors.Unmatched)
	require.True(t, ok)
	assert.Equal(t, int64(150), st.Total.Pass)
	assert.Equal(t, int64(50), st.Total.Block)
}

// TestUnknownMethodsWithResource: WithResource still names every call,
// unknown methods included, from their raw name: a proxy that wants limits
// per forwarded method maps the names it knows and sends the rest to
// Unmatched itself.
func TestUnknownMethodsWithResource(t *testing.T) {
	g := newGuard(t, clock.NewFake(time.Hour))
	var named sync.Map
	opt := sluicegrpc.WithResource(func(_ context.Context, m string) string { named.Store(m, true); return "all" })
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := grpc.NewServer(append(guarded(g, opt), grpc.UnknownServiceHandler(func(any, grpc.ServerStream) error { return nil }))...)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	conn := dial(t, lis.Addr().String())
	err = conn.Invoke(ctxT(t), "/backend.Svc/Get", &greeterpb.HelloRequest{}, new(greeterpb.HelloReply))
	assert.Equal(t, codes.Internal, status.Code(err)) // no response message: the handler returned none
	_, ok := named.Load("/backend.Svc/Get")
	assert.True(t, ok)
	st, ok := g.Stats("all")
	require.True(t, ok)
	assert.Equal(t, int64(1), st.Total.Pass)
}
