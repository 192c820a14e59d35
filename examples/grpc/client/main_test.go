package main

import (
	"bytes"
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"

	sluicegrpc "github.com/sluicekit/sluice/adapters/grpc"
	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/examples/grpc/greeterpb"
)

type greeter struct {
	greeterpb.UnimplementedGreeterServer
}

func (greeter) SayHello(_ context.Context, req *greeterpb.HelloRequest) (*greeterpb.HelloReply, error) {
	return &greeterpb.HelloReply{Message: "Hello, " + req.GetName()}, nil
}

func (greeter) Count(req *greeterpb.CountRequest, s grpc.ServerStreamingServer[greeterpb.CountReply]) error {
	for i := int32(1); i <= req.GetN(); i++ {
		if err := s.Send(&greeterpb.CountReply{Number: i}); err != nil {
			return err
		}
	}
	return nil
}

// serve starts a Greeter on 127.0.0.1:0 whose every method passes two calls
// per hour per x-user-id, and returns its address.
func serve(t *testing.T) string {
	t.Helper()
	guard, err := core.New(core.WithRules(core.Rule{
		Name: "two-per-user", Resource: "/sluice.examples.Greeter/*", Kind: core.KindHotspot,
		Param: "metadata:x-user-id", Algorithm: "token-bucket", Limit: 2, Window: time.Hour,
	}))
	require.NoError(t, err)
	srv := grpc.NewServer(
		grpc.ChainUnaryInterceptor(sluicegrpc.UnaryServerInterceptor(guard)),
		grpc.ChainStreamInterceptor(sluicegrpc.StreamServerInterceptor(guard)),
	)
	greeterpb.RegisterGreeterServer(srv, greeter{})
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(lis)
	}()
	t.Cleanup(func() {
		srv.Stop()
		<-done
	})
	return lis.Addr().String()
}

func TestClientPrintsOKAndBlocked(t *testing.T) {
	addr := serve(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	var out bytes.Buffer
	require.NoError(t, run(ctx, []string{"-addr", addr, "-n", "3", "-user", "bob"}, &out))
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, lines, 3, out.String())
	assert.Equal(t, "call 1: OK Hello, bob", lines[0])
	assert.Equal(t, "call 2: OK Hello, bob", lines[1])
	assert.Regexp(t, `^call 3: blocked by rule two-per-user, retry after \d+m\d+(\.\d+)?s$`, lines[2])

	out.Reset()
	require.NoError(t, run(ctx, []string{"-addr", addr, "-n", "3", "-user", "carol", "-stream"}, &out))
	lines = strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, lines, 3, out.String())
	assert.Equal(t, "call 1: OK counted 1 2 3", lines[0])
	assert.Equal(t, "call 2: OK counted 1 2 3", lines[1])
	assert.True(t, strings.HasPrefix(lines[2], "call 3: blocked by rule two-per-user"), lines[2])

	require.Error(t, run(ctx, []string{"-n"}, &out))
}
