package sluiceenvoy_test

import (
	"context"
	"log/slog"
	"strconv"
	"testing"

	ratelimitv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"

	sluiceenvoy "github.com/sluicekit/sluice/adapters/envoy"
	"github.com/sluicekit/sluice/core"
)

// BenchmarkShouldRateLimit is a decision without gRPC: one descriptor of a
// per-address limit (hotspot) or of a fixed value (flow), in memory.
func BenchmarkShouldRateLimit(b *testing.B) {
	d, err := sluiceenvoy.ParseDomain("b", []byte(`
domain: bench
descriptors:
  - key: remote_address
    rate_limit: {unit: second, requests_per_unit: 1000000000}
  - key: generic_key
    value: api
    rate_limit: {unit: second, requests_per_unit: 1000000000}
`))
	if err != nil {
		b.Fatal(err)
	}
	g, err := core.New(core.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		b.Fatal(err)
	}
	defer g.Close()
	s, err := sluiceenvoy.New(g, sluiceenvoy.Config{Domains: []sluiceenvoy.Domain{d}})
	if err != nil {
		b.Fatal(err)
	}
	reqs := make([]*rlsv3.RateLimitRequest, 1000)
	for i := range reqs {
		reqs[i] = &rlsv3.RateLimitRequest{Domain: "bench", Descriptors: []*ratelimitv3.RateLimitDescriptor{
			{Entries: []*ratelimitv3.RateLimitDescriptor_Entry{{Key: "remote_address", Value: "10.0.0." + strconv.Itoa(i)}}}}}
	}
	fixed := &rlsv3.RateLimitRequest{Domain: "bench", Descriptors: []*ratelimitv3.RateLimitDescriptor{
		{Entries: []*ratelimitv3.RateLimitDescriptor_Entry{{Key: "generic_key", Value: "api"}}}}}
	ctx := context.Background()
	b.Run("hotspot", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			if _, err := s.ShouldRateLimit(ctx, reqs[i%len(reqs)]); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
	b.Run("flow", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := s.ShouldRateLimit(ctx, fixed); err != nil {
				b.Fatal(err)
			}
		}
	})
}
