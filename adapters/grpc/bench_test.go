package sluicegrpc_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/sluicekit/sluice/adapters/adaptertest"
	sluicegrpc "github.com/sluicekit/sluice/adapters/grpc"
	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/extractors"
)

// BenchmarkGRPCUnaryInterceptor measures what the unary server interceptor
// adds to a call: "handler" calls the handler directly, "interceptor" calls
// the interceptor function with the same handler, under one flow rule and one
// hotspot rule on a metadata key, both far from their limits, with a context
// carrying the call's incoming metadata. "core" is Enter and Exit with the
// metadata value at hand (a core.ParamMap): the Guard's share of the cost;
// "extractor" reads it through an extractors.Params reset (ResetGRPC) per call,
// as the interceptor does (which takes it from a pool).
//
//	go -C adapters/grpc test -run '^$' -bench GRPCUnaryInterceptor -benchmem -benchtime 200ms .
func BenchmarkGRPCUnaryInterceptor(b *testing.B) {
	g, err := core.New(core.WithRules(
		core.Rule{Name: "rate", Resource: sayHello, Kind: core.KindFlow, Limit: 1 << 50},
		core.Rule{Name: "per-user", Resource: sayHello, Kind: core.KindHotspot, Param: "metadata:x-user-id",
			Limit: 1_000_000_000, Window: time.Second},
	))
	if err != nil {
		b.Fatal(err)
	}
	unary := sluicegrpc.UnaryServerInterceptor(g)
	info := &grpc.UnaryServerInfo{FullMethod: sayHello}
	ctx := metadata.NewIncomingContext(context.Background(), metadata.Pairs(
		"x-user-id", "alice", "content-type", "application/grpc", "user-agent", "grpc-go/1.85.0"))
	reply := &struct{}{}
	handler := func(context.Context, any) (any, error) { return reply, nil }

	direct := func() {
		if _, err := handler(ctx, nil); err != nil {
			b.Fatal(err)
		}
	}
	intercepted := func() {
		if _, err := unary(ctx, nil, info, handler); err != nil {
			b.Fatal(err)
		}
	}
	// core is the Guard's share: Enter and Exit with the user's value at
	// hand, without reading it from the metadata.
	params := core.ParamMap{"metadata:x-user-id": {"alice"}}
	guardOnly := func() {
		e, err := g.Enter(ctx, sayHello, core.WithParams(params))
		if err != nil {
			b.Fatal(err)
		}
		_, err = handler(ctx, nil)
		e.Exit(err)
	}
	// extractor adds reading the value from the metadata through the
	// Extractor, with params reused as the interceptor reuses them: what is
	// left is the interceptor's own.
	x, err := extractors.New()
	if err != nil {
		b.Fatal(err)
	}
	withExtractor := func(p *extractors.Params) {
		p.ResetGRPC((*extractors.Extractor)(x), sluicegrpc.CallInfo{}, ctx, sayHello)
		e, err := g.Enter(ctx, sayHello, core.WithParams(p))
		if err != nil {
			b.Fatal(err)
		}
		_, err = handler(ctx, nil)
		e.Exit(err)
	}
	for _, bc := range []struct {
		name string
		call func(*extractors.Params)
	}{
		{"handler", func(*extractors.Params) { direct() }},
		{"core", func(*extractors.Params) { guardOnly() }},
		{"extractor", withExtractor},
		{"interceptor", func(*extractors.Params) { intercepted() }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			p := new(extractors.Params)
			b.ReportAllocs()
			for b.Loop() {
				bc.call(p)
			}
		})
		b.Run(bc.name+"/parallel", func(b *testing.B) {
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				p := new(extractors.Params)
				for pb.Next() {
					bc.call(p)
				}
			})
		})
	}
	if st, _ := g.Stats(sayHello); st.Block != 0 {
		b.Fatalf("blocked %d calls", st.Block)
	}
}

// TestAllocs holds the unary server interceptor's pass path to its
// allocation budget: none of its own, and grpc-go's copy of the values when
// a rule reads a metadata param; none either with rules reading no params,
// or with a cost (WithCost), which takes the interceptors' shared path.
func TestAllocs(t *testing.T) {
	if adaptertest.RaceEnabled {
		t.Skip("allocation counts differ under the race detector")
	}
	ctx := metadata.NewIncomingContext(context.Background(), metadata.Pairs("x-user-id", "alice"))
	info := &grpc.UnaryServerInfo{FullMethod: sayHello}
	handler := func(context.Context, any) (any, error) { return nil, nil }
	cost := sluicegrpc.WithCost(func(context.Context, string, any) int64 { return 2 })
	for _, tc := range []struct {
		param string // of a hotspot rule, "" for none
		opts  []sluicegrpc.Option
		want  float64
	}{{"metadata:x-user-id", nil, 1}, {"method", nil, 0}, {"", nil, 0}, {"metadata:x-user-id", []sluicegrpc.Option{cost}, 1}, {"", []sluicegrpc.Option{cost}, 0}} {
		rules := []core.Rule{{Name: "rate", Resource: sayHello, Kind: core.KindFlow, Limit: 1 << 50}}
		if tc.param != "" {
			rules = append(rules, core.Rule{Name: "per-value", Resource: sayHello, Kind: core.KindHotspot, Param: tc.param, Limit: 1_000_000_000})
		}
		g, err := core.New(core.WithRules(rules...))
		require.NoError(t, err)
		unary := sluicegrpc.UnaryServerInterceptor(g, tc.opts...)
		allocs := testing.AllocsPerRun(200, func() {
			if _, err := unary(ctx, nil, info, handler); err != nil {
				t.Fatal(err)
			}
		})
		assert.Equal(t, tc.want, allocs, "param %q, %d options", tc.param, len(tc.opts))
		require.NoError(t, g.Close())
	}
}
