package sluiceotel_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/clock"
	sluiceotel "github.com/sluicekit/sluice/core/otel"
)

// blockGuard returns a Guard with the BlockEvents hook, a flow rule letting
// one request through a second on "GET /items", and a hotspot rule letting
// each tenant through once (never, for tenant "banned").
func blockGuard(t testing.TB) *core.Guard {
	t.Helper()
	g, err := core.New(core.WithClock(clock.NewFake(time.Hour)), quiet, core.WithBlockHook(sluiceotel.BlockEvents()), core.WithRules(
		core.Rule{Name: "items", Resource: "GET /items", Kind: core.KindFlow, Limit: 1, Window: time.Second},
		core.Rule{Name: "tenants", Resource: "GET /t", Kind: core.KindHotspot, Param: "tenant", Limit: 1, Window: time.Minute,
			Overrides: map[string]int64{"banned": 0}},
	))
	require.NoError(t, err)
	t.Cleanup(func() { g.Close() })
	return g
}

func attrs(kvs []attribute.KeyValue) map[string]any {
	out := map[string]any{}
	for _, kv := range kvs {
		out[string(kv.Key)] = kv.Value.AsInterface()
	}
	return out
}

// TestBlockEvents records spans in memory: a blocked request's span gets
// one event with the rule, reason and retry time; a request that passes
// gets none.
func TestBlockEvents(t *testing.T) {
	g := blockGuard(t)
	sr := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sr))
	defer tp.Shutdown(context.Background())
	tracer := tp.Tracer("test")

	enter := func(name, resource string, opts ...core.EnterOption) error {
		ctx, span := tracer.Start(context.Background(), name)
		defer span.End()
		e, err := g.Enter(ctx, resource, opts...)
		if err == nil {
			e.Exit(nil)
		}
		return err
	}
	require.NoError(t, enter("first", "GET /items"))
	require.Error(t, enter("second", "GET /items"))
	tenant := func(v string) core.EnterOption { return core.WithParams(core.ParamMap{"tenant": {v}}) }
	require.Error(t, enter("banned", "GET /t", tenant("banned")))

	spans := sr.Ended()
	require.Len(t, spans, 3)
	assert.Empty(t, spans[0].Events(), "a request that passes adds no event")
	require.Len(t, spans[1].Events(), 1)
	ev := spans[1].Events()[0]
	assert.Equal(t, "sluice.blocked", ev.Name)
	assert.Equal(t, map[string]any{
		"sluice.resource":    "GET /items",
		"sluice.rule.name":   "items",
		"sluice.rule.kind":   "flow",
		"sluice.reason":      "flow",
		"sluice.retry_after": 1.0,
	}, attrs(ev.Attributes))
	require.Len(t, spans[2].Events(), 1)
	assert.Equal(t, map[string]any{
		"sluice.resource":    "GET /t",
		"sluice.rule.name":   "tenants",
		"sluice.rule.kind":   "hotspot",
		"sluice.reason":      "hotspot",
		"sluice.param":       "tenant",
		"sluice.retry_after": 0.0,
		"sluice.never":       true,
	}, attrs(spans[2].Events()[0].Attributes), "the param's name, never its value")
}

// TestBlockEventsNotRecording: a span that is not recording (unsampled, or
// none in the context) gets nothing, and the hook allocates nothing.
func TestBlockEventsNotRecording(t *testing.T) {
	sr := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sr), sdktrace.WithSampler(sdktrace.NeverSample()))
	defer tp.Shutdown(context.Background())
	ctx, span := tp.Tracer("test").Start(context.Background(), "unsampled")
	require.False(t, span.IsRecording())
	hook := sluiceotel.BlockEvents()
	b := &core.BlockedError{Resource: "r", Rule: "x", Kind: core.KindFlow, RetryAfter: time.Second}
	for _, c := range []context.Context{ctx, context.Background()} {
		assert.Zero(t, testing.AllocsPerRun(100, func() { hook(c, b) }))
	}
	span.End()
	assert.Empty(t, sr.Ended(), "an unsampled span is not recorded at all")

	// A recording span does get the event (the hook is the one tested).
	rec, span2 := sdktrace.NewTracerProvider().Tracer("test").Start(context.Background(), "sampled")
	require.True(t, span2.IsRecording())
	hook(rec, b)
	assert.Len(t, span2.(sdktrace.ReadOnlySpan).Events(), 1)
}

// BenchmarkBlockEvents measures a blocked Enter with and without the hook,
// with a span that is not recording and with one that is, and the hook
// alone:
//
//	go -C core/otel test -run '^$' -bench BlockEvents -benchmem -count 6 .
func BenchmarkBlockEvents(b *testing.B) {
	rules := core.WithRules(core.Rule{Name: "none", Resource: "r", Kind: core.KindFlow, Limit: 0, Window: time.Second})
	unsampled := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.NeverSample()))
	sampled := sdktrace.NewTracerProvider()
	ctxNotRecording, _ := unsampled.Tracer("b").Start(context.Background(), "req")
	ctxRecording, span := sampled.Tracer("b").Start(context.Background(), "req")
	defer span.End()
	for _, c := range []struct {
		name string
		hook bool
		ctx  context.Context
	}{
		{"nohook", false, ctxNotRecording},
		{"hook/notrecording", true, ctxNotRecording},
		{"hook/recording", true, ctxRecording},
	} {
		opts := []core.Option{quiet, rules}
		if c.hook {
			opts = append(opts, core.WithBlockHook(sluiceotel.BlockEvents()))
		}
		g, err := core.New(opts...)
		require.NoError(b, err)
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := g.Enter(c.ctx, "r"); err == nil {
					b.Fatal("passed")
				}
			}
		})
		b.Run(c.name+"/parallel", func(b *testing.B) {
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := g.Enter(c.ctx, "r"); err == nil {
						panic("passed")
					}
				}
			})
		})
		g.Close()
	}
	// The hook alone, as Enter calls it.
	hook := sluiceotel.BlockEvents()
	blocked := &core.BlockedError{Resource: "r", Rule: "none", Kind: core.KindFlow, Never: true}
	for _, c := range []struct {
		name string
		ctx  context.Context
	}{{"only/notrecording", ctxNotRecording}, {"only/nospan", context.Background()}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				hook(c.ctx, blocked)
			}
		})
	}
}
