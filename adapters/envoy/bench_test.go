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

// requestPath is a Server, in memory, with a per-address limit (hotspot)
// and a limit of a fixed value (flow), and requests of each: 1,000
// addresses, the fixed value, and both descriptors at once.
type requestPath struct {
	s           *sluiceenvoy.Server
	addrs       []*rlsv3.RateLimitRequest
	fixed, both *rlsv3.RateLimitRequest
	many        *rlsv3.RateLimitRequest // of 20,000 descriptors
}

func newRequestPath(tb testing.TB) requestPath {
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
		tb.Fatal(err)
	}
	g, err := core.New(core.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { g.Close() })
	s, err := sluiceenvoy.New(g, sluiceenvoy.Config{Domains: []sluiceenvoy.Domain{d}})
	if err != nil {
		tb.Fatal(err)
	}
	p := requestPath{s: s, addrs: make([]*rlsv3.RateLimitRequest, 1000)}
	for i := range p.addrs {
		p.addrs[i] = &rlsv3.RateLimitRequest{Domain: "bench", Descriptors: []*ratelimitv3.RateLimitDescriptor{
			{Entries: []*ratelimitv3.RateLimitDescriptor_Entry{{Key: "remote_address", Value: "10.0.0." + strconv.Itoa(i)}}}}}
	}
	fixed := &ratelimitv3.RateLimitDescriptor{Entries: []*ratelimitv3.RateLimitDescriptor_Entry{{Key: "generic_key", Value: "api"}}}
	p.fixed = &rlsv3.RateLimitRequest{Domain: "bench", Descriptors: []*ratelimitv3.RateLimitDescriptor{fixed}}
	p.both = &rlsv3.RateLimitRequest{Domain: "bench", Descriptors: []*ratelimitv3.RateLimitDescriptor{p.addrs[0].Descriptors[0], fixed}}
	p.many = &rlsv3.RateLimitRequest{Domain: "bench"}
	for i := range 20_000 {
		p.many.Descriptors = append(p.many.Descriptors, p.addrs[i%len(p.addrs)].Descriptors[0])
	}
	return p
}

// BenchmarkShouldRateLimit is a decision without gRPC, in memory: one
// descriptor of the per-address limit (hotspot), one of the fixed value
// (flow), both in one request, and a request of 20,000 descriptors, beyond
// the bound (answered OVER_LIMIT, none decided: BeyondDeny).
//
//	go test -run XXX -bench ShouldRateLimit -benchmem
func BenchmarkShouldRateLimit(b *testing.B) {
	p := newRequestPath(b)
	ctx := context.Background()
	b.Run("hotspot", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			if _, err := p.s.ShouldRateLimit(ctx, p.addrs[i%len(p.addrs)]); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
	for _, c := range []struct {
		name string
		req  *rlsv3.RateLimitRequest
	}{{"flow", p.fixed}, {"two-descriptors", p.both}, {"beyond-20000", p.many}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := p.s.ShouldRateLimit(ctx, c.req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
