package sluiceotel_test

import (
	"context"
	"fmt"
	"log"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/clock"
	sluiceotel "github.com/sluicekit/sluice/core/otel"
)

// The response time histogram comes from a Producer given to the SDK's
// reader (a service's would be a PeriodicReader with an exporter).
func ExampleNewProducer() {
	fc := clock.NewFake(time.Hour)
	guard, err := core.New(core.WithClock(fc))
	if err != nil {
		log.Fatal(err)
	}
	defer guard.Close()
	p, err := sluiceotel.NewProducer(guard)
	if err != nil {
		log.Fatal(err)
	}
	reader := sdkmetric.NewManualReader(sdkmetric.WithProducer(p))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(context.Background())

	for _, rt := range []time.Duration{100 * time.Microsecond, 3 * time.Millisecond, 200 * time.Millisecond} {
		e, _ := guard.Enter(context.Background(), "GET /items")
		fc.Advance(rt)
		e.Exit(nil)
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		log.Fatal(err)
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			h := m.Data.(metricdata.Histogram[float64])
			for _, dp := range h.DataPoints {
				res, _ := dp.Attributes.Value("sluice.resource")
				fmt.Printf("%s %s: %d requests, %.4fs\n", m.Name, res.AsString(), dp.Count, dp.Sum)
			}
		}
	}
	// Output:
	// sluice.request.duration GET /items: 3 requests, 0.2031s
}
