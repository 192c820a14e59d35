package peerbench

import (
	"context"
	"errors"
	"syscall"
	"testing"
	"time"

	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/ratelimit"
	"golang.org/x/time/rate"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	sluicegrpc "github.com/sluicekit/sluice/adapters/grpc"
	"github.com/sluicekit/sluice/core"
)

const method = "/helloworld.Greeter/SayHello"

// incoming is the metadata a gRPC server hands a call of a typical client:
// the transport's headers and the application's.
var incoming = metadata.Pairs(
	":authority", "api.example.com:443",
	"content-type", "application/grpc",
	"user-agent", "grpc-go/1.85.0",
	"grpc-accept-encoding", "identity,deflate,gzip",
	"authorization", "Bearer eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJ1LTQyIn0.c2lnbmF0dXJl",
	"x-request-id", "5f0c6a3e-9b1d-4c2a-8e7f-1a2b3c4d5e6f",
	"traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
	"x-user-id", "u-1000042",
)

// bench runs a call of the unary server interceptor unary with a handler
// that returns at once, its context carrying the incoming metadata,
// serially and from parallel goroutines, reporting the process's CPU time
// per call (cpu-ns/op) next to ns/op.
func bench(b *testing.B, unary grpc.UnaryServerInterceptor) {
	info := &grpc.UnaryServerInfo{FullMethod: method}
	reply := &struct{}{}
	handler := func(context.Context, any) (any, error) { return reply, nil }
	ctx := metadata.NewIncomingContext(context.Background(), incoming)
	call := func(b *testing.B) {
		if _, err := unary(ctx, nil, info, handler); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("serial", func(b *testing.B) {
		b.ReportAllocs()
		defer cpuPerOp(b)()
		for b.Loop() {
			call(b)
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		defer cpuPerOp(b)()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				call(b)
			}
		})
	})
}

// cpuPerOp starts measuring the CPU time of the whole process (every
// thread); the function it returns reports it per call as cpu-ns/op.
func cpuPerOp(b *testing.B) func() {
	c0, ok := processCPU()
	return func() {
		if c, ok2 := processCPU(); ok && ok2 {
			b.ReportMetric(float64(c-c0)/float64(b.N), "cpu-ns/op")
		}
	}
}

// processCPU returns the CPU time the process used so far.
func processCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}

// BenchmarkUnarySluiceFlow is sluice's interceptor with one flow rule on
// the method, far from its limit.
func BenchmarkUnarySluiceFlow(b *testing.B) {
	bench(b, sluicegrpc.UnaryServerInterceptor(flowGuard(b)))
}

// flowGuard returns a Guard with one flow rule on the method, far from its
// limit, closed when b ends, so that its goroutines do not run during the
// benchmarks after it.
func flowGuard(b *testing.B) *core.Guard {
	g, err := core.New(core.WithRules(core.Rule{Resource: method, Kind: core.KindFlow, Limit: 1 << 50}))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = g.Close() })
	return g
}

// xrate is a go-grpc-middleware ratelimit.Limiter over an x/time/rate
// Limiter, as that package's documentation shows.
type xrate struct{ l *rate.Limiter }

var errLimited = errors.New("rate limited")

func (x xrate) Limit(context.Context) error {
	if !x.l.Allow() {
		return errLimited
	}
	return nil
}

// BenchmarkUnaryGoGRPCMiddlewareXTimeRate is go-grpc-middleware's ratelimit
// interceptor over an x/time/rate Limiter far from its limit.
func BenchmarkUnaryGoGRPCMiddlewareXTimeRate(b *testing.B) {
	bench(b, ratelimit.UnaryServerInterceptor(xrate{rate.NewLimiter(1<<40, 1<<30)}))
}

// BenchmarkUnaryHandler is the handler alone, called through a
// pass-through interceptor: what both of the others add to.
func BenchmarkUnaryHandler(b *testing.B) {
	bench(b, func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		return h(ctx, req)
	})
}

// BenchmarkUnarySluiceCore is the Guard's share of BenchmarkUnarySluiceFlow:
// Enter and Exit of its rule around the handler, without the interceptor.
// BenchmarkUnarySluiceFlow's cpu-ns/op less this one's is what the
// interceptor adds to the Guard (see the package documentation of
// sluicegrpc, "Cost").
func BenchmarkUnarySluiceCore(b *testing.B) {
	g := flowGuard(b)
	bench(b, func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		e, err := g.Enter(ctx, info.FullMethod)
		if err != nil {
			return nil, err
		}
		resp, err := h(ctx, req)
		e.Exit(err)
		return resp, err
	})
}
