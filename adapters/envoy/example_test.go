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
