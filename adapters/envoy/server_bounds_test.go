package sluiceenvoy_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	ratelimitv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	sluiceenvoy "github.com/sluicekit/sluice/adapters/envoy"
	"github.com/sluicekit/sluice/core"
)

// descs returns n descriptors of distinct keys k<from>, k<from+1>, ...
func descs(from, n int) []*ratelimitv3.RateLimitDescriptor {
	ds := make([]*ratelimitv3.RateLimitDescriptor, n)
	for i := range ds {
		ds[i] = desc(fmt.Sprintf("k%d", from+i), "v")
	}
	return ds
}

// resources returns the names of the Guard's resources.
func resources(s *sluiceenvoy.Server) []string {
	var names []string
	for _, r := range s.Guard().Snapshot().Resources {
		names = append(names, r.Resource)
	}
	return names
}

// TestMaxDescriptors: a request of more descriptors than the bound (64 by
// default, WithMaxDescriptors) is OVER_LIMIT, with a problem document
// naming the bound and no Retry-After, deciding and counting nothing.
// Before, it got InvalidArgument, which Envoy lets through unlimited unless
// failure_mode_deny is set: a route with 65 rate_limits was never limited.
func TestMaxDescriptors(t *testing.T) {
	rules := []core.Rule{{Name: "api", Resource: "api/*", Kind: core.KindFlow, Limit: 1000, Window: time.Minute}}
	for _, c := range []struct {
		name string
		opts []sluiceenvoy.Option
		max  int
	}{
		{"default", nil, 64},
		{"WithMaxDescriptors(3)", []sluiceenvoy.Option{sluiceenvoy.WithMaxDescriptors(3)}, 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			rpc, s, _ := serve(t, sluiceenvoy.Config{Rules: rules}, c.opts...)
			for _, n := range []int{c.max + 1, 20_000} {
				r, err := rpc.ShouldRateLimit(context.Background(), &rlsv3.RateLimitRequest{Domain: "api", Descriptors: descs(0, n)})
				require.NoError(t, err)
				assert.Equal(t, rlsv3.RateLimitResponse_OVER_LIMIT, r.OverallCode)
				require.Len(t, r.Statuses, n)
				assert.Equal(t, rlsv3.RateLimitResponse_OVER_LIMIT, r.Statuses[n-1].Code)
				assert.Equal(t, "application/problem+json", header(r.ResponseHeadersToAdd, "Content-Type"))
				assert.Empty(t, header(r.ResponseHeadersToAdd, "Retry-After"), "it will never pass")
				var doc map[string]any
				require.NoError(t, json.Unmarshal(r.RawBody, &doc))
				assert.Equal(t, fmt.Sprintf("the request has %d descriptors, more than the %d the rate limit service decides (sluiceenvoy.WithMaxDescriptors, sluice-rls -max-descriptors): it will never pass", n, c.max), doc["detail"])
				assert.Equal(t, "max-descriptors", doc["rule"])
				assert.EqualValues(t, c.max, doc["limit"])
			}
			assert.Empty(t, resources(s), "a refused request decides nothing")
			r := ask(t, rpc, "api", descs(0, c.max)...)
			assert.Equal(t, rlsv3.RateLimitResponse_OK, r.OverallCode)
			assert.Equal(t, uint32(1000-c.max), r.Statuses[c.max-1].LimitRemaining, "api/* counts them together, and only them")
		})
	}
	_, err := sluiceenvoy.New(nil, sluiceenvoy.Config{}, sluiceenvoy.WithMaxDescriptors(0))
	assert.Error(t, err)
	g, err := core.New()
	require.NoError(t, err)
	t.Cleanup(func() { _ = g.Close() })
	_, err = sluiceenvoy.New(g, sluiceenvoy.Config{}, sluiceenvoy.WithMaxDescriptors(0))
	assert.ErrorContains(t, err, "WithMaxDescriptors: n must be >= 1, got 0")
}

// TestUnmatchedDescriptorsMakeNoResource: a descriptor of a domain of
// sluice rules that no rule matches is answered OK without a limit and
// makes no resource of the Guard. Before, each made one, so that requests
// of distinct keys filled the Guard's table (10,000 resources), after
// which the limits seen for the first time shared the overflow resource's
// statistics.
func TestUnmatchedDescriptorsMakeNoResource(t *testing.T) {
	cfg := domain(t, "domain: edge\ndescriptors:\n  - key: remote_address\n    rate_limit: {unit: minute, requests_per_unit: 3}\n")
	cfg.Rules = []core.Rule{{Name: "users", Resource: "api/user", Kind: core.KindHotspot, Param: "user", Limit: 1, Window: time.Minute}}
	rpc, s, _ := serve(t, cfg)
	for i := range 200 { // 200 x 64 keys: more than the Guard's 10,000 resources
		r := ask(t, rpc, "api", descs(64*i, 64)...)
		assert.Equal(t, rlsv3.RateLimitResponse_OK, r.OverallCode)
		assert.Nil(t, r.Statuses[0].CurrentLimit)
	}
	assert.Zero(t, len(resources(s)), "resources made")
	assert.Equal(t, rlsv3.RateLimitResponse_OK, ask(t, rpc, "api", desc("user", "alice")).OverallCode)
	assert.Equal(t, rlsv3.RateLimitResponse_OVER_LIMIT, ask(t, rpc, "api", desc("user", "alice")).OverallCode)
	ask(t, rpc, "edge", desc("remote_address", "a"))
	assert.Equal(t, []string{"api/user", "edge.remote_address"}, resources(s),
		"the limits have resources of their own")
}

// TestRulesStayInTheirDomains: sluice rules limit only the descriptors of
// the domains of sluice rules, never those of an envoyproxy/ratelimit
// domain or a descriptor's limit override. A rule whose resource has no
// '/' (a domain and keys) is refused, naming the rule; "*/*" is every
// descriptor of every domain of sluice rules. Before, the rule {resource:
// "*", limit: 1} made the second request to the config domain edge
// OVER_LIMIT while its current_limit said 3 a minute, and "*/*" limited
// descriptors' limit overrides.
func TestRulesStayInTheirDomains(t *testing.T) {
	cfg := domain(t, "domain: edge\ndescriptors:\n  - key: remote_address\n    rate_limit: {unit: minute, requests_per_unit: 3}\n")
	g, err := core.New()
	require.NoError(t, err)
	t.Cleanup(func() { _ = g.Close() })
	for _, res := range []string{"*", "edge*", "edge.remote_address", "override:*"} {
		bad := cfg
		bad.Rules = []core.Rule{{Name: "all", Resource: res, Kind: core.KindFlow, Limit: 1, Window: time.Minute}}
		_, err := sluiceenvoy.New(g, bad)
		assert.ErrorContains(t, err, `rule "all": resource "`+res+`": a resource of sluice rules is a domain and keys joined by '/'`)
	}

	cfg.Rules = []core.Rule{{Name: "all", Resource: "*/*", Kind: core.KindFlow, Limit: 1, Window: time.Minute}}
	rpc, _, _ := serve(t, cfg)
	for i := range 3 {
		r := ask(t, rpc, "edge", desc("remote_address", "a"))
		assert.Equal(t, rlsv3.RateLimitResponse_OK, r.OverallCode, "request %d to edge", i+1)
		assert.Equal(t, uint32(3), r.Statuses[0].CurrentLimit.GetRequestsPerUnit())
		assert.Equal(t, rlsv3.RateLimitResponse_RateLimit_MINUTE, r.Statuses[0].CurrentLimit.GetUnit())
	}
	assert.Equal(t, rlsv3.RateLimitResponse_OVER_LIMIT, ask(t, rpc, "edge", desc("remote_address", "a")).OverallCode)

	for _, dom := range []string{"edge", "api"} {
		for i := range 2 {
			d := desc("user", "bob")
			d.Limit = &ratelimitv3.RateLimitDescriptor_RateLimitOverride{RequestsPerUnit: 5, Unit: 2} // MINUTE
			r := ask(t, rpc, dom, d)
			assert.Equal(t, rlsv3.RateLimitResponse_OK, r.OverallCode, "%s: override request %d", dom, i+1)
			assert.Equal(t, uint32(5-1-i), r.Statuses[0].LimitRemaining, "%s: override request %d", dom, i+1)
		}
	}

	assert.Equal(t, rlsv3.RateLimitResponse_OK, ask(t, rpc, "api", desc("user", "bob")).OverallCode)
	assert.Equal(t, rlsv3.RateLimitResponse_OVER_LIMIT, ask(t, rpc, "api", desc("key", "x")).OverallCode, "*/* counts api's descriptors together")
}

// TestFloodLeavesConfiguredLimitsTheirStatistics: descriptors of
// client-chosen keys that a glob rule (api/*) matches fill the Guard's
// resource bound, over many requests of 64 descriptors; the limits of the
// config, asked only after the flood, and one a reload adds after it, keep
// statistics of their own. Before, they counted under core.OverflowResource
// (their decisions were right).
func TestFloodLeavesConfiguredLimitsTheirStatistics(t *testing.T) {
	const yaml = "domain: edge\ndescriptors:\n  - key: remote_address\n    rate_limit: {unit: minute, requests_per_unit: 3}\n"
	cfg := domain(t, yaml)
	cfg.Rules = []core.Rule{{Name: "api", Resource: "api/*", Kind: core.KindFlow, Limit: 1 << 40, Window: time.Minute}}
	rpc, s, _ := serve(t, cfg)
	for i := range 160 { // 160 x 64 keys: more than the Guard's 10,000 resources
		require.Equal(t, rlsv3.RateLimitResponse_OK, ask(t, rpc, "api", descs(64*i, 64)...).OverallCode)
	}
	over, ok := s.Guard().Stats(core.OverflowResource)
	require.True(t, ok, "the flood went over the bound")
	assert.Equal(t, int64(160*64-10_000), over.Total.Pass)

	cfg = domain(t, yaml+"  - key: user\n    rate_limit: {unit: minute, requests_per_unit: 1}\n")
	cfg.Rules = []core.Rule{{Name: "api", Resource: "api/*", Kind: core.KindFlow, Limit: 1 << 40, Window: time.Minute}}
	require.NoError(t, s.SetConfig(cfg), "a reload after the flood")
	for name, want := range map[string][2]int64{"remote_address": {3, 1}, "user": {1, 3}} {
		for range 4 {
			ask(t, rpc, "edge", desc(name, "a"))
		}
		st, ok := s.Guard().Stats("edge." + name)
		require.True(t, ok, name)
		assert.Equal(t, want, [2]int64{st.Total.Pass, st.Total.Block}, name)
	}
	after, _ := s.Guard().Stats(core.OverflowResource)
	assert.Equal(t, over.Total, after.Total, "nothing more counted under the overflow resource")
}
