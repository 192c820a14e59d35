package peerbench

import (
	"context"
	"errors"
	"testing"

	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/ratelimit"
	"golang.org/x/time/rate"
	"google.golang.org/grpc"

	sluicegrpc "github.com/sluicekit/sluice/adapters/grpc"
	"github.com/sluicekit/sluice/core"
)

const method = "/helloworld.Greeter/SayHello"

// bench runs a call of the unary server interceptor unary with a handler
// that returns at once, serially and from parallel goroutines.
func bench(b *testing.B, unary grpc.UnaryServerInterceptor) {
	info := &grpc.UnaryServerInfo{FullMethod: method}
	reply := &struct{}{}
	handler := func(context.Context, any) (any, error) { return reply, nil }
	ctx := context.Background()
	call := func(b *testing.B) {
		if _, err := unary(ctx, nil, info, handler); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("serial", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			call(b)
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				call(b)
			}
		})
	})
}

// BenchmarkUnarySluiceFlow is sluice's interceptor with one flow rule on
// the method, far from its limit.
func BenchmarkUnarySluiceFlow(b *testing.B) {
	g, err := core.New(core.WithRules(core.Rule{Resource: method, Kind: core.KindFlow, Limit: 1 << 50}))
	if err != nil {
		b.Fatal(err)
	}
	bench(b, sluicegrpc.UnaryServerInterceptor(g))
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
func BenchmarkUnarySluiceCore(b *testing.B) {
	g, err := core.New(core.WithRules(core.Rule{Resource: method, Kind: core.KindFlow, Limit: 1 << 50}))
	if err != nil {
		b.Fatal(err)
	}
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
