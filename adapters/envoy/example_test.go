package sluiceenvoy_test

import (
	"context"
	"fmt"
	"log"
	"log/slog"

	ratelimitv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"google.golang.org/grpc"

	sluiceenvoy "github.com/sluicekit/sluice/adapters/envoy"
	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/rulesfile"
)

// An envoyproxy/ratelimit config file, served as it is.
func Example() {
	d, err := sluiceenvoy.ParseDomain("edge.yaml", []byte(`
domain: edge
descriptors:
  - key: remote_address
    rate_limit: {unit: minute, requests_per_unit: 2}
`))
	if err != nil {
		log.Fatal(err)
	}
	g, err := core.New(core.WithShadowQuotas(), core.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		log.Fatal(err)
	}
	defer g.Close()
	s, err := sluiceenvoy.New(g, sluiceenvoy.Config{Domains: []sluiceenvoy.Domain{d}})
	if err != nil {
		log.Fatal(err)
	}
	srv := grpc.NewServer()
	s.Register(srv) // then srv.Serve(listener)

	req := &rlsv3.RateLimitRequest{Domain: "edge", Descriptors: []*ratelimitv3.RateLimitDescriptor{{
		Entries: []*ratelimitv3.RateLimitDescriptor_Entry{{Key: "remote_address", Value: "192.0.2.1"}},
	}}}
	for range 3 {
		resp, err := s.ShouldRateLimit(context.Background(), req)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(resp.OverallCode, resp.Statuses[0].LimitRemaining)
	}
	// Output:
	// OK 1
	// OK 0
	// OVER_LIMIT 0
}

// A sluice rules file: a descriptor of domain api with the entry user is
// the resource api/user, and the entry's value its param user.
func Example_rulesFile() {
	rules, err := rulesfile.Parse([]byte(`
rules:
  - resource: api/user
    kind: hotspot
    param: user
    limit: 1
    window: 1h
    overrides: {ci-bot: 0}
`))
	if err != nil {
		log.Fatal(err)
	}
	g, err := core.New(core.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		log.Fatal(err)
	}
	defer g.Close()
	s, err := sluiceenvoy.New(g, sluiceenvoy.Config{Rules: rules})
	if err != nil {
		log.Fatal(err)
	}
	for _, user := range []string{"alice", "alice", "ci-bot"} {
		resp, err := s.ShouldRateLimit(context.Background(), &rlsv3.RateLimitRequest{Domain: "api",
			Descriptors: []*ratelimitv3.RateLimitDescriptor{{Entries: []*ratelimitv3.RateLimitDescriptor_Entry{{Key: "user", Value: user}}}}})
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(user, resp.OverallCode)
	}
	// Output:
	// alice OK
	// alice OVER_LIMIT
	// ci-bot OVER_LIMIT
}

// The units of the envoyproxy/ratelimit config format: a month is 30 days
// and a year 365, as the reference server counts them.
func ExampleUnit_Duration() {
	for _, u := range []sluiceenvoy.Unit{sluiceenvoy.UnitSecond, sluiceenvoy.UnitMinute,
		sluiceenvoy.UnitHour, sluiceenvoy.UnitDay, sluiceenvoy.UnitWeek, sluiceenvoy.UnitMonth, sluiceenvoy.UnitYear} {
		fmt.Println(u, u.Duration())
	}
	// Output:
	// second 1s
	// minute 1m0s
	// hour 1h0m0s
	// day 24h0m0s
	// week 168h0m0s
	// month 720h0m0s
	// year 8760h0m0s
}

// A config built in Go and replaced while serving. With
// WithoutRateLimitHeaders, answers carry no RateLimit fields; one over the
// limit still carries Retry-After and its problem document's type.
func ExampleServer_SetConfig() {
	g, err := core.New(core.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		log.Fatal(err)
	}
	defer g.Close()
	perSecond := func(n uint32) sluiceenvoy.Config {
		return sluiceenvoy.Config{Domains: []sluiceenvoy.Domain{{Name: "edge", Descriptors: []sluiceenvoy.Descriptor{{
			Key: "path", Value: "/login",
			RateLimit: &sluiceenvoy.RateLimit{Unit: sluiceenvoy.UnitSecond, RequestsPerUnit: n},
		}}}}}
	}
	s, err := sluiceenvoy.New(g, perSecond(1), sluiceenvoy.WithoutRateLimitHeaders())
	if err != nil {
		log.Fatal(err)
	}
	req := &rlsv3.RateLimitRequest{Domain: "edge", Descriptors: []*ratelimitv3.RateLimitDescriptor{{
		Entries: []*ratelimitv3.RateLimitDescriptor_Entry{{Key: "path", Value: "/login"}},
	}}}
	ask := func() {
		resp, err := s.ShouldRateLimit(context.Background(), req)
		if err != nil {
			log.Fatal(err)
		}
		var headers []string
		for _, h := range resp.ResponseHeadersToAdd {
			headers = append(headers, h.Key)
		}
		fmt.Println(resp.OverallCode, resp.Statuses[0].CurrentLimit.RequestsPerUnit, headers)
	}
	ask()
	ask()
	if err := s.SetConfig(perSecond(5)); err != nil {
		log.Fatal(err)
	}
	ask()
	// Output:
	// OK 1 []
	// OVER_LIMIT 1 [Retry-After Content-Type]
	// OK 5 []
}
