// Command grpc is a gRPC server guarded by sluice: the Greeter service
// (greeterpb) with a unary method, SayHello, and a server-streaming method,
// Count, limited by the rules of an embedded rules.yaml (or -rules FILE):
// SayHello at 5 calls per second, every method at 2 calls per second per
// x-user-id metadata value, and at most 2 Count streams at once. A blocked
// call fails with codes.ResourceExhausted, a google.rpc.RetryInfo detail and
// the grpc-retry-pushback-ms trailer. With -rules, the example applies the
// file's changes while it serves: it looks at the file every -reload
// (default 1s; 0: never), applies a new version once two looks saw it,
// keeps the counts of the rules that stay, and logs each reload, or the
// problem of a bad version, whose rules are not applied. Server reflection
// is on, so grpcurl can call it:
//
//	go -C examples run ./grpc -addr 127.0.0.1:50051
//	grpcurl -plaintext -H 'x-user-id: alice' -d '{"name":"alice"}' 127.0.0.1:50051 sluice.examples.Greeter/SayHello
//	grpcurl -plaintext -d '{"n":5,"interval_ms":500}' 127.0.0.1:50051 sluice.examples.Greeter/Count
//	go -C examples run ./grpc/client -addr 127.0.0.1:50051 -n 10 -user alice
//
// Interrupt it (Ctrl-C, SIGTERM) to stop it gracefully: it stops accepting
// calls and lets those in flight finish, for up to -grace.
package main

import (
	"context"
	_ "embed"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/reflection"
	"google.golang.org/grpc/status"

	sluicegrpc "github.com/sluicekit/sluice/adapters/grpc"
	"github.com/sluicekit/sluice/examples/grpc/greeterpb"
	"github.com/sluicekit/sluice/examples/internal/exampleapp"
)

//go:embed rules.yaml
var defaultRules []byte

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, nil); err != nil {
		fmt.Fprintln(os.Stderr, "grpc example:", err)
		os.Exit(1)
	}
}

// run parses args, serves until ctx is done and then stops gracefully.
// It writes its log to out and, when listening is not nil, passes it the
// address it listens on.
func run(ctx context.Context, args []string, out io.Writer, listening func(net.Addr)) error {
	fs := flag.NewFlagSet("grpc", flag.ContinueOnError)
	fs.SetOutput(out)
	addr := fs.String("addr", "127.0.0.1:50051", "address to listen on")
	rulesFile := fs.String("rules", "", "rules file (YAML, or JSON with a .json name); default: the embedded rules.yaml")
	reload := fs.Duration("reload", time.Second, "how often to look at the rules file for changes (0: never)")
	grace := fs.Duration("grace", 5*time.Second, "longest to wait for calls in flight at shutdown")
	opsAddr := fs.String("http", "127.0.0.1:8081", "address of the HTTP server of the dashboard (/debug/sluice/) and metrics (/metrics); empty: none")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}

	guard, stopGuard, err := exampleapp.NewGuard(ctx, *rulesFile, defaultRules, *reload, slog.New(slog.NewTextHandler(out, nil)))
	if err != nil {
		return err
	}
	defer stopGuard()

	// Reflection is how grpcurl learns the service: it is not limited.
	skipReflection := sluicegrpc.WithSkipper(func(_ context.Context, method string) bool {
		return strings.HasPrefix(method, "/grpc.reflection.")
	})
	srv := grpc.NewServer(
		grpc.ChainUnaryInterceptor(sluicegrpc.UnaryServerInterceptor(guard, skipReflection)),
		grpc.ChainStreamInterceptor(sluicegrpc.StreamServerInterceptor(guard, skipReflection)),
	)
	greeterpb.RegisterGreeterServer(srv, greeter{})
	reflection.Register(srv)

	if *opsAddr != "" {
		// The operators' pages, on HTTP beside the gRPC server, until run
		// returns.
		ops, err := exampleapp.Ops(guard, http.NotFoundHandler())
		if err != nil {
			return err
		}
		opsCtx, stopOps := context.WithCancel(ctx)
		opsDone := make(chan error, 1)
		opsReady := make(chan struct{})
		go func() {
			opsDone <- exampleapp.Serve(opsCtx, *opsAddr, ops, func(a string) {
				fmt.Fprintf(out, "dashboard on http://%s/debug/sluice/, metrics on http://%s/metrics\n", a, a)
				close(opsReady)
			})
		}()
		select {
		case <-opsReady:
		case err := <-opsDone:
			stopOps()
			return fmt.Errorf("-http: %w", err)
		}
		defer func() {
			stopOps()
			<-opsDone
		}()
	}

	lis, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "%d rules loaded; serving sluice.examples.Greeter on %s\n", len(guard.Rules()), lis.Addr())
	if listening != nil {
		listening(lis.Addr())
	}

	served := make(chan error, 1)
	go func() { served <- srv.Serve(lis) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	fmt.Fprintln(out, "shutting down")
	stopped := make(chan struct{})
	go func() {
		srv.GracefulStop()
		close(stopped)
	}()
	timer := time.NewTimer(*grace)
	defer timer.Stop()
	select {
	case <-stopped:
	case <-timer.C:
		srv.Stop() // cancels the calls still in flight; GracefulStop then returns
		<-stopped
	}
	if err := <-served; err != nil && !errors.Is(err, grpc.ErrServerStopped) {
		return err
	}
	return nil
}

// The bounds of a Count request.
const (
	maxCount    = 1000
	maxInterval = 10 * time.Second
)

// greeter implements the Greeter service.
type greeter struct {
	greeterpb.UnimplementedGreeterServer
}

// SayHello greets req.Name.
func (greeter) SayHello(_ context.Context, req *greeterpb.HelloRequest) (*greeterpb.HelloReply, error) {
	name := req.GetName()
	if name == "" {
		name = "world"
	}
	return &greeterpb.HelloReply{Message: "Hello, " + name}, nil
}

// Count streams 1 to req.N (at most maxCount), req.IntervalMs milliseconds
// apart (at most maxInterval), and ends early when the call does.
func (greeter) Count(req *greeterpb.CountRequest, stream grpc.ServerStreamingServer[greeterpb.CountReply]) error {
	n := min(max(req.GetN(), 0), maxCount)
	interval := min(time.Duration(max(req.GetIntervalMs(), 0))*time.Millisecond, maxInterval)
	var tick <-chan time.Time
	if interval > 0 {
		t := time.NewTicker(interval)
		defer t.Stop()
		tick = t.C
	}
	for i := int32(1); i <= n; i++ {
		if err := stream.Send(&greeterpb.CountReply{Number: i}); err != nil {
			return err
		}
		if tick == nil || i == n {
			continue
		}
		select {
		case <-tick:
		case <-stream.Context().Done():
			return status.FromContextError(stream.Context().Err()).Err()
		}
	}
	return nil
}
