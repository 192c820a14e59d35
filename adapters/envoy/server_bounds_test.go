package sluiceenvoy_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	ratelimitv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	sluiceenvoy "github.com/sluicekit/sluice/adapters/envoy"
	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/clock"
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
				assert.Equal(t, fmt.Sprintf("the request has %d descriptors, more than the %d the rate limit service decides (sluiceenvoy.WithMaxDescriptors, sluice-rls -max-descriptors): it will never pass (a bound of the server, which shadow mode lifts only when no limit that may apply is enforced)", n, c.max), doc["detail"])
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

// serveWith is serve with the Guard's options gopts (after the fake clock).
func serveWith(t *testing.T, cfg sluiceenvoy.Config, gopts []core.Option, opts ...sluiceenvoy.Option) (rlsv3.RateLimitServiceClient, *sluiceenvoy.Server) {
	t.Helper()
	g, err := core.New(append([]core.Option{core.WithClock(clock.NewFake(time.Hour)), core.WithLogger(slog.New(slog.DiscardHandler))}, gopts...)...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = g.Close() })
	s, err := sluiceenvoy.New(g, cfg, opts...)
	require.NoError(t, err)
	return dial(t, s), s
}

// TestBoundsInShadowMode: a bound of the server (WithMaxDescriptors,
// WithMaxOverrides) refuses a request only when a limit that is not in
// shadow mode may apply to it: one of its domain's limits, a sluice rule
// that may name its domain, or a limit override (never in shadow mode, as
// in the reference server, unless core.WithShadow makes every rule a
// shadow rule). A request that only shadow limits could limit is OK,
// none of its descriptors decided. Before, every request beyond a bound
// was OVER_LIMIT, in shadow mode too, where no limit may refuse.
func TestBoundsInShadowMode(t *testing.T) {
	const shadowYAML = "domain: edge\ndescriptors:\n  - key: k0\n    shadow_mode: true\n    rate_limit: {unit: minute, requests_per_unit: 1}\n"
	shadowRule := []core.Rule{{Name: "api", Resource: "api/*", Kind: core.KindFlow, Limit: 1, Window: time.Minute, Shadow: true}}
	enforced := []core.Rule{{Name: "api", Resource: "api/*", Kind: core.KindFlow, Limit: 1, Window: time.Minute}}
	override := func(rpu uint32) *ratelimitv3.RateLimitDescriptor {
		d := desc("k0", "v")
		d.Limit = &ratelimitv3.RateLimitDescriptor_RateLimitOverride{RequestsPerUnit: rpu, Unit: typev3.RateLimitUnit_MINUTE}
		return d
	}
	over := append(descs(0, 3), override(5)) // 4 descriptors, one an override
	for _, c := range []struct {
		name   string
		cfg    sluiceenvoy.Config
		gopts  []core.Option
		domain string
		ds     []*ratelimitv3.RateLimitDescriptor
		want   rlsv3.RateLimitResponse_Code
	}{
		{"shadow_mode limits", domain(t, shadowYAML), nil, "edge", descs(0, 4), rlsv3.RateLimitResponse_OK},
		{"an enforced limit beside them", domain(t, shadowYAML+"  - key: k1\n    rate_limit: {unit: minute, requests_per_unit: 1}\n"), nil, "edge", descs(0, 4), rlsv3.RateLimitResponse_OVER_LIMIT},
		{"a limit override", domain(t, shadowYAML), nil, "edge", over, rlsv3.RateLimitResponse_OVER_LIMIT},
		{"core.WithShadow", domain(t, shadowYAML+"  - key: k1\n    rate_limit: {unit: minute, requests_per_unit: 1}\n"), []core.Option{core.WithShadow()}, "edge", over, rlsv3.RateLimitResponse_OK},
		{"shadow rules", sluiceenvoy.Config{Rules: shadowRule}, nil, "api", descs(0, 4), rlsv3.RateLimitResponse_OK},
		{"enforced rules", sluiceenvoy.Config{Rules: enforced}, nil, "api", descs(0, 4), rlsv3.RateLimitResponse_OVER_LIMIT},
		{"enforced rules, core.WithShadow", sluiceenvoy.Config{Rules: enforced}, []core.Option{core.WithShadow()}, "api", descs(0, 4), rlsv3.RateLimitResponse_OK},
		{"an enforced glob of another domain", sluiceenvoy.Config{Rules: append(enforced[:0:0], shadowRule[0], core.Rule{Name: "b", Resource: "b*/*", Kind: core.KindFlow, Limit: 1, Window: time.Minute})}, nil, "api", descs(0, 4), rlsv3.RateLimitResponse_OK},
		{"an enforced glob of this domain", sluiceenvoy.Config{Rules: append(enforced[:0:0], shadowRule[0], core.Rule{Name: "a", Resource: "a*/x", Kind: core.KindFlow, Limit: 1, Window: time.Minute})}, nil, "api", descs(0, 4), rlsv3.RateLimitResponse_OVER_LIMIT},
	} {
		t.Run(c.name, func(t *testing.T) {
			rpc, s := serveWith(t, c.cfg, c.gopts, sluiceenvoy.WithMaxDescriptors(3))
			r := ask(t, rpc, c.domain, c.ds...)
			assert.Equal(t, c.want, r.OverallCode)
			for i, st := range r.Statuses {
				assert.Equal(t, c.want, st.Code, "descriptor %d", i)
			}
			if c.want == rlsv3.RateLimitResponse_OVER_LIMIT {
				assert.Contains(t, string(r.RawBody), "a bound of the server, which shadow mode lifts only when no limit that may apply is enforced")
			} else {
				assert.Empty(t, r.ResponseHeadersToAdd)
				assert.Empty(t, resources(s), "nothing decided")
			}
		})
	}

	// WithMaxOverrides: the override beyond the bound is OK without limit
	// when its rule would be a shadow rule, and the others decided.
	for _, c := range []struct {
		name  string
		gopts []core.Option
		want  rlsv3.RateLimitResponse_Code
	}{{"enforced", nil, rlsv3.RateLimitResponse_OVER_LIMIT}, {"core.WithShadow", []core.Option{core.WithShadow(), core.WithShadowQuotas()}, rlsv3.RateLimitResponse_OK}} {
		t.Run("max overrides "+c.name, func(t *testing.T) {
			rpc, _ := serveWith(t, domain(t, shadowYAML), c.gopts, sluiceenvoy.WithMaxOverrides(1))
			require.Equal(t, rlsv3.RateLimitResponse_OK, ask(t, rpc, "edge", override(5)).OverallCode)
			r := ask(t, rpc, "edge", desc("k0", "v"), override(6))
			assert.Equal(t, c.want, r.OverallCode)
			if c.want == rlsv3.RateLimitResponse_OK {
				assert.Equal(t, uint32(1), r.Statuses[0].GetCurrentLimit().GetRequestsPerUnit(), "the shadow limit decided")
				assert.Nil(t, r.Statuses[1].CurrentLimit, "the override beyond the bound: no limit")
			}
		})
	}
}

// TestFloodLeavesConfiguredLimitsTheirHistory: the history the dashboard
// shows (core.Guard.History) keeps 1,000 resources that no rule names,
// those first seen; a flood of 1,152 client-chosen descriptors that a glob
// rule matches takes those, and the limits of the config, asked only
// after it, and one a reload adds, still get a history of their own.
// Before, they counted in the overflow resource's history, hidden.
func TestFloodLeavesConfiguredLimitsTheirHistory(t *testing.T) {
	const yaml = "domain: edge\ndescriptors:\n  - key: remote_address\n    rate_limit: {unit: minute, requests_per_unit: 3}\n"
	glob := []core.Rule{{Name: "api", Resource: "api/*", Kind: core.KindFlow, Limit: 1 << 40, Window: time.Minute}}
	cfg := domain(t, yaml)
	cfg.Rules = glob
	rpc, s, fc := serve(t, cfg)
	g := s.Guard()
	g.History(0) // starts recording
	for i := range 18 {
		require.Equal(t, rlsv3.RateLimitResponse_OK, ask(t, rpc, "api", descs(64*i, 64)...).OverallCode)
	}
	fc.Advance(time.Second)
	g.History(0)
	cfg = domain(t, yaml+"  - key: user\n    rate_limit: {unit: minute, requests_per_unit: 1}\n")
	cfg.Rules = glob
	require.NoError(t, s.SetConfig(cfg), "a reload after the flood")
	for range 4 {
		ask(t, rpc, "edge", desc("remote_address", "a"))
		ask(t, rpc, "edge", desc("user", "a"))
	}
	fc.Advance(time.Second)
	passed := map[string]float64{}
	flood := 0
	for _, r := range g.History(0).Resources {
		for _, v := range r.Pass {
			passed[r.Resource] += v
		}
		if strings.HasPrefix(r.Resource, "api/") {
			flood++
		}
	}
	assert.Equal(t, 1000, flood, "the flood's resources with a history")
	assert.Equal(t, float64(18*64-1000), passed[core.OverflowResource])
	assert.Equal(t, float64(3), passed["edge.remote_address"], "a limit of the config")
	assert.Equal(t, float64(1), passed["edge.user"], "a limit a reload added")
}
