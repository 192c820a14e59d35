package sluiceotel_test

import (
	"context"
	"fmt"
	"log"
	"slices"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/sluicekit/sluice/core"
	sluiceotel "github.com/sluicekit/sluice/core/otel"
)

// A service registers the Guard's instruments with its MeterProvider, and
// the BlockEvents hook to mark blocks on the requests' spans. Here the
// MeterProvider has a ManualReader and the TracerProvider records spans in
// memory; a service's would export them.
func Example() {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(context.Background())
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	defer tp.Shutdown(context.Background())

	guard, err := core.New(core.WithBlockHook(sluiceotel.BlockEvents()), core.WithRules(
		core.Rule{Name: "items", Resource: "GET /items/{id}", Kind: core.KindFlow, Limit: 2, Window: time.Minute},
	))
	if err != nil {
		log.Fatal(err)
	}
	defer guard.Close()
	reg, err := sluiceotel.Register(guard, sluiceotel.WithMeterProvider(mp))
	if err != nil {
		log.Fatal(err)
	}
	defer reg.Unregister()

	// Three requests, each in a span: the rule lets two through a minute.
	for range 3 {
		ctx, span := tp.Tracer("example").Start(context.Background(), "GET /items/{id}")
		if e, err := guard.Enter(ctx, "GET /items/{id}"); err == nil {
			e.Exit(nil)
		}
		span.End()
	}

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		log.Fatal(err)
	}
	var lines []string
	for _, m := range rm.ScopeMetrics[0].Metrics {
		if m.Name != "sluice.requests" && m.Name != "sluice.rule.blocked" {
			continue
		}
		for _, p := range m.Data.(metricdata.Sum[int64]).DataPoints {
			if p.Value > 0 {
				lines = append(lines, fmt.Sprintf("%s{%s} %d", m.Name, p.Attributes.Encoded(attribute.DefaultEncoder()), p.Value))
			}
		}
	}
	slices.Sort(lines)
	fmt.Println(strings.Join(lines, "\n"))
	for _, s := range spans.Ended() {
		for _, ev := range s.Events() {
			fmt.Println(ev.Name, len(ev.Attributes), "attributes")
		}
	}
	// Output:
	// sluice.requests{sluice.resource=GET /items/{id},sluice.result=flow} 1
	// sluice.requests{sluice.resource=GET /items/{id},sluice.result=passed} 2
	// sluice.rule.blocked{sluice.rule.kind=flow,sluice.rule.name=items,sluice.rule.resource=GET /items/{id}} 1
	// sluice.blocked 5 attributes
}
