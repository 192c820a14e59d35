package sluiceotel

import (
	"context"
	"errors"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/sluicekit/sluice/core"
)

// Producer hands a Guard's response time histograms to an OpenTelemetry
// SDK reader, which takes it with the SDK's WithProducer:
//
//	p, err := sluiceotel.NewProducer(guard)
//	...
//	reader := sdkmetric.NewPeriodicReader(exporter, sdkmetric.WithProducer(p))
//
// The OpenTelemetry API has no asynchronous histogram: the Guard counts
// the response times (core.RTHistogram), and each collection reads them
// from one Snapshot into an explicit bucket histogram named
// sluice.request.duration, in seconds, per resource (attribute
// sluice.resource), with the bounds of the Prometheus exporter's classic
// buckets (core.RTHistogram.Explicit: powers of 4 from 2^-15 s, about
// 30µs, to 32 s). Its temporality is cumulative, whatever the reader's:
// the counts since the Guard first saw each resource, with NewProducer's
// time as their start (make the Producer with the Guard). It is safe for
// concurrent use.
type Producer struct {
	g       *core.Guard
	start   time.Time
	version string // scopeVersion
}

// NewProducer returns a Producer of g's response time histograms.
func NewProducer(g *core.Guard) (*Producer, error) {
	if g == nil {
		return nil, errors.New("sluiceotel: NewProducer: guard is nil")
	}
	return &Producer{g: g, start: time.Now(), version: scopeVersion()}, nil
}

// Produce returns the histogram of each resource's response times now.
func (p *Producer) Produce(context.Context) ([]metricdata.ScopeMetrics, error) {
	s := p.g.Snapshot()
	now := time.Now()
	points := make([]metricdata.HistogramDataPoint[float64], 0, len(s.Resources))
	for _, r := range s.Resources {
		bounds, counts := r.Total.RTHistogram.Explicit()
		var n uint64
		for _, c := range counts {
			n += c
		}
		points = append(points, metricdata.HistogramDataPoint[float64]{
			Attributes: attribute.NewSet(attrResource.String(r.Resource)),
			StartTime:  p.start, Time: now,
			Count: n, Bounds: bounds, BucketCounts: counts, Sum: r.Total.RT.Seconds(),
		})
	}
	return []metricdata.ScopeMetrics{{
		Scope: instrumentation.Scope{Name: scopeName, Version: p.version},
		Metrics: []metricdata.Metrics{{
			Name:        "sluice.request.duration",
			Description: "Response times of the completed requests, by resource.",
			Unit:        "s",
			Data:        metricdata.Histogram[float64]{DataPoints: points, Temporality: metricdata.CumulativeTemporality},
		}},
	}}, nil
}
