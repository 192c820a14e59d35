package sluiceenvoy_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	ratelimitv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/wrapperspb"

	sluiceenvoy "github.com/sluicekit/sluice/adapters/envoy"
	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/clock"
	"github.com/sluicekit/sluice/core/rulesfile"
)

// serve starts a Server for cfg on a loopback gRPC server with a fake
// clock, and returns a client of it.
func serve(t *testing.T, cfg sluiceenvoy.Config, opts ...sluiceenvoy.Option) (rlsv3.RateLimitServiceClient, *sluiceenvoy.Server, *clock.Fake) {
	t.Helper()
	fc := clock.NewFake(time.Hour)
	g, err := core.New(core.WithClock(fc), core.WithShadowQuotas(), core.WithLogger(slog.New(slog.DiscardHandler)))
	require.NoError(t, err)
	t.Cleanup(func() { _ = g.Close() })
	s, err := sluiceenvoy.New(g, cfg, opts...)
	require.NoError(t, err)
	return dial(t, s), s, fc
}

func dial(t *testing.T, s *sluiceenvoy.Server) rlsv3.RateLimitServiceClient {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := grpc.NewServer()
	s.Register(srv)
	done := make(chan struct{})
	go func() { defer close(done); _ = srv.Serve(lis) }()
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close(); srv.Stop(); <-done })
	return rlsv3.NewRateLimitServiceClient(conn)
}

func domain(t *testing.T, yaml string) sluiceenvoy.Config {
	t.Helper()
	d, err := sluiceenvoy.ParseDomain("test.yaml", []byte(yaml))
	require.NoError(t, err)
	return sluiceenvoy.Config{Domains: []sluiceenvoy.Domain{d}}
}

// desc makes a descriptor of key, value pairs.
func desc(kv ...string) *ratelimitv3.RateLimitDescriptor {
	d := &ratelimitv3.RateLimitDescriptor{}
	for i := 0; i+1 < len(kv); i += 2 {
		d.Entries = append(d.Entries, &ratelimitv3.RateLimitDescriptor_Entry{Key: kv[i], Value: kv[i+1]})
	}
	return d
}

func ask(t *testing.T, c rlsv3.RateLimitServiceClient, dom string, ds ...*ratelimitv3.RateLimitDescriptor) *rlsv3.RateLimitResponse {
	t.Helper()
	resp, err := c.ShouldRateLimit(context.Background(), &rlsv3.RateLimitRequest{Domain: dom, Descriptors: ds})
	require.NoError(t, err)
	require.Len(t, resp.Statuses, len(ds))
	return resp
}

func header(hs []*corev3.HeaderValue, k string) string {
	for _, h := range hs {
		if h.Key == k {
			return h.Value
		}
	}
	return ""
}

const edge = `
domain: edge
descriptors:
  - key: remote_address
    rate_limit: {unit: minute, requests_per_unit: 3}
  - key: generic_key
    value: login
    rate_limit: {unit: second, requests_per_unit: 2, name: login}
  - key: generic_key
    value: free
  - key: generic_key
    value: never
    rate_limit: {unit: hour, requests_per_unit: 0}
  - key: generic_key
    value: vip
    rate_limit: {unlimited: true}
  - key: path
    value: /api/*
    rate_limit: {unit: second, requests_per_unit: 1}
  - key: tenant
    descriptors:
      - key: plan
        value: gold
        rate_limit: {unit: second, requests_per_unit: 5, replaces: [{name: login}]}
`

func TestLimitsAndRemaining(t *testing.T) {
	c, s, fc := serve(t, domain(t, edge))
	for i, want := range []uint32{2, 1, 0} {
		r := ask(t, c, "edge", desc("remote_address", "10.0.0.1"))
		require.Equal(t, rlsv3.RateLimitResponse_OK, r.OverallCode, "request %d", i)
		st := r.Statuses[0]
		assert.Equal(t, want, st.LimitRemaining, "request %d", i)
		assert.Equal(t, uint32(3), st.CurrentLimit.RequestsPerUnit)
		assert.Equal(t, rlsv3.RateLimitResponse_RateLimit_MINUTE, st.CurrentLimit.Unit)
		assert.LessOrEqual(t, st.DurationUntilReset.AsDuration(), time.Minute)
	}
	r := ask(t, c, "edge", desc("remote_address", "10.0.0.1"))
	require.Equal(t, rlsv3.RateLimitResponse_OVER_LIMIT, r.OverallCode)
	assert.Equal(t, rlsv3.RateLimitResponse_OVER_LIMIT, r.Statuses[0].Code)
	assert.Equal(t, uint32(0), r.Statuses[0].LimitRemaining)
	assert.Positive(t, r.Statuses[0].DurationUntilReset.AsDuration())
	assert.NotEmpty(t, header(r.ResponseHeadersToAdd, "Retry-After"))
	assert.Equal(t, "application/problem+json", header(r.ResponseHeadersToAdd, "Content-Type"))
	var doc map[string]any
	require.NoError(t, json.Unmarshal(r.RawBody, &doc))
	assert.Equal(t, "https://iana.org/assignments/http-problem-types#quota-exceeded", doc["type"])
	assert.Equal(t, float64(3), doc["limit"])
	assert.Equal(t, float64(60), doc["window"])

	// Another address has its own count.
	r = ask(t, c, "edge", desc("remote_address", "10.0.0.2"))
	assert.Equal(t, rlsv3.RateLimitResponse_OK, r.OverallCode)
	assert.Equal(t, uint32(2), r.Statuses[0].LimitRemaining)

	st := s.DescriptorStats()
	require.NotEmpty(t, st)
	assert.Equal(t, sluiceenvoy.DescriptorStats{Domain: "edge", Key: "remote_address", Rule: "edge.remote_address",
		TotalHits: 5, OverLimit: 1, NearLimit: 1, WithinLimit: 4}, st[3])

	// A minute later the first address passes again.
	fc.Advance(time.Minute)
	r = ask(t, c, "edge", desc("remote_address", "10.0.0.1"))
	assert.Equal(t, rlsv3.RateLimitResponse_OK, r.OverallCode)
}

func TestWholeRequest(t *testing.T) {
	c, _, _ := serve(t, domain(t, edge))
	// free whitelists (no limit), vip is unlimited, an unmatched descriptor
	// is not limited; login is limited.
	r := ask(t, c, "edge", desc("generic_key", "free"), desc("generic_key", "vip"), desc("other", "x"), desc("generic_key", "login"))
	require.Equal(t, rlsv3.RateLimitResponse_OK, r.OverallCode)
	assert.Nil(t, r.Statuses[0].CurrentLimit)
	assert.Equal(t, uint32(0), r.Statuses[0].LimitRemaining)
	assert.Equal(t, uint32(1<<32-1), r.Statuses[1].LimitRemaining)
	assert.Nil(t, r.Statuses[2].CurrentLimit)
	assert.Equal(t, "login", r.Statuses[3].CurrentLimit.Name)
	assert.Equal(t, uint32(1), r.Statuses[3].LimitRemaining)
	assert.Equal(t, `"edge.generic_key_login";q=2;w=1`, header(r.ResponseHeadersToAdd, "RateLimit-Policy"))
	assert.Equal(t, `"edge.generic_key_login";r=1;t=1`, header(r.ResponseHeadersToAdd, "RateLimit"))

	// One descriptor over its limit makes the request OVER_LIMIT; the
	// others keep their statuses, in order.
	r = ask(t, c, "edge", desc("generic_key", "free"), desc("generic_key", "never"))
	assert.Equal(t, rlsv3.RateLimitResponse_OVER_LIMIT, r.OverallCode)
	assert.Equal(t, rlsv3.RateLimitResponse_OK, r.Statuses[0].Code)
	assert.Equal(t, rlsv3.RateLimitResponse_OVER_LIMIT, r.Statuses[1].Code)
	assert.Empty(t, header(r.ResponseHeadersToAdd, "Retry-After"), "a limit of 0 never admits: no retry time")
	assert.Contains(t, string(r.RawBody), "request-will-not-pass")

	// The trailing wildcard matches by prefix, one count per value.
	assert.Equal(t, rlsv3.RateLimitResponse_OK, ask(t, c, "edge", desc("path", "/api/a")).OverallCode)
	assert.Equal(t, rlsv3.RateLimitResponse_OVER_LIMIT, ask(t, c, "edge", desc("path", "/api/a")).OverallCode)
	assert.Equal(t, rlsv3.RateLimitResponse_OK, ask(t, c, "edge", desc("path", "/api/b")).OverallCode)
	assert.Nil(t, ask(t, c, "edge", desc("path", "/web")).Statuses[0].CurrentLimit)
}

func TestDepthAndReplaces(t *testing.T) {
	c, _, _ := serve(t, domain(t, edge))
	// The limit applies at the depth of the request's entries only.
	assert.Nil(t, ask(t, c, "edge", desc("tenant", "a")).Statuses[0].CurrentLimit)
	assert.Nil(t, ask(t, c, "edge", desc("tenant", "a", "plan", "gold", "x", "y")).Statuses[0].CurrentLimit)
	r := ask(t, c, "edge", desc("tenant", "a", "plan", "gold"))
	assert.Equal(t, uint32(4), r.Statuses[0].LimitRemaining)
	// A limit that replaces login drops it from the request: login is not
	// counted.
	for range 3 {
		r = ask(t, c, "edge", desc("generic_key", "login"), desc("tenant", "b", "plan", "gold"))
		assert.Equal(t, rlsv3.RateLimitResponse_OK, r.OverallCode)
		assert.Nil(t, r.Statuses[0].CurrentLimit)
	}
	assert.Equal(t, uint32(1), ask(t, c, "edge", desc("generic_key", "login")).Statuses[0].LimitRemaining)
}

func TestHitsAddendAndOverride(t *testing.T) {
	c, _, _ := serve(t, domain(t, edge))
	ctx := context.Background()
	r, err := c.ShouldRateLimit(ctx, &rlsv3.RateLimitRequest{Domain: "edge", HitsAddend: 2,
		Descriptors: []*ratelimitv3.RateLimitDescriptor{desc("remote_address", "a")}})
	require.NoError(t, err)
	assert.Equal(t, uint32(1), r.Statuses[0].LimitRemaining)
	d := desc("remote_address", "a")
	d.HitsAddend = wrapperspb.UInt64(2)
	r, err = c.ShouldRateLimit(ctx, &rlsv3.RateLimitRequest{Domain: "edge", HitsAddend: 1, Descriptors: []*ratelimitv3.RateLimitDescriptor{d}})
	require.NoError(t, err)
	assert.Equal(t, rlsv3.RateLimitResponse_OVER_LIMIT, r.OverallCode, "the descriptor's hits_addend wins over the request's")

	// A descriptor's limit overrides the config's.
	d = desc("generic_key", "free")
	d.Limit = &ratelimitv3.RateLimitDescriptor_RateLimitOverride{RequestsPerUnit: 1, Unit: typev3.RateLimitUnit_HOUR}
	r = ask(t, c, "edge", d)
	assert.Equal(t, rlsv3.RateLimitResponse_OK, r.OverallCode)
	assert.Equal(t, uint32(1), r.Statuses[0].CurrentLimit.RequestsPerUnit)
	assert.Equal(t, rlsv3.RateLimitResponse_RateLimit_HOUR, r.Statuses[0].CurrentLimit.Unit)
	assert.Equal(t, rlsv3.RateLimitResponse_OVER_LIMIT, ask(t, c, "edge", d).OverallCode)
}

func TestBadRequests(t *testing.T) {
	c, _, _ := serve(t, domain(t, edge))
	zero := desc("remote_address", "a")
	zero.HitsAddend = wrapperspb.UInt64(0)
	for _, tc := range []struct {
		name string
		req  *rlsv3.RateLimitRequest
		code codes.Code
		msg  string
	}{
		{"unknown domain", &rlsv3.RateLimitRequest{Domain: "nope", Descriptors: []*ratelimitv3.RateLimitDescriptor{desc("a", "b")}}, codes.NotFound, `unknown domain "nope"`},
		{"no domain", &rlsv3.RateLimitRequest{Descriptors: []*ratelimitv3.RateLimitDescriptor{desc("a", "b")}}, codes.InvalidArgument, "domain must not be empty"},
		{"no descriptors", &rlsv3.RateLimitRequest{Domain: "edge"}, codes.InvalidArgument, "no descriptors"},
		{"no entries", &rlsv3.RateLimitRequest{Domain: "edge", Descriptors: []*ratelimitv3.RateLimitDescriptor{{}}}, codes.InvalidArgument, "descriptor 0: no entries"},
		{"empty key", &rlsv3.RateLimitRequest{Domain: "edge", Descriptors: []*ratelimitv3.RateLimitDescriptor{desc("a", "b", "", "c")}}, codes.InvalidArgument, "entry 1: empty key"},
		{"hits_addend 0", &rlsv3.RateLimitRequest{Domain: "edge", Descriptors: []*ratelimitv3.RateLimitDescriptor{zero}}, codes.InvalidArgument, "hits_addend 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.ShouldRateLimit(context.Background(), tc.req)
			require.Error(t, err)
			assert.Equal(t, tc.code, status.Code(err))
			assert.Contains(t, status.Convert(err).Message(), tc.msg)
		})
	}
}

func TestShadowMode(t *testing.T) {
	c, s, _ := serve(t, domain(t, `
domain: d
descriptors:
  - key: k
    shadow_mode: true
    rate_limit: {unit: minute, requests_per_unit: 1}
`))
	for range 3 {
		assert.Equal(t, rlsv3.RateLimitResponse_OK, ask(t, c, "d", desc("k", "v")).OverallCode)
	}
	var shadowed int64
	for _, r := range s.Guard().Snapshot().Rules {
		shadowed += r.Shadowed
	}
	assert.Equal(t, int64(2), shadowed, "shadow mode counts what it would have rejected")
	assert.Equal(t, uint64(2), s.DescriptorStats()[0].ShadowMode)
}

// TestConcurrencyBound: N goroutines asking at once for one descriptor get
// exactly L admissions in a window.
func TestConcurrencyBound(t *testing.T) {
	const n, limit = 64, 20
	for _, y := range []string{"key: k\n    value: v", "key: k"} { // flow and hotspot
		c, _, _ := serve(t, domain(t, "domain: d\ndescriptors:\n  - "+y+"\n    rate_limit: {unit: minute, requests_per_unit: 20}\n"))
		var wg sync.WaitGroup
		var mu sync.Mutex
		ok := 0
		for range n {
			wg.Go(func() {
				r, err := c.ShouldRateLimit(context.Background(), &rlsv3.RateLimitRequest{Domain: "d", Descriptors: []*ratelimitv3.RateLimitDescriptor{desc("k", "v")}})
				if err == nil && r.OverallCode == rlsv3.RateLimitResponse_OK {
					mu.Lock()
					ok++
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		assert.Equal(t, limit, ok, y)
	}
}

func TestRulesDomain(t *testing.T) {
	rules, err := rulesfile.Parse([]byte(`
rules:
  - resource: api/user
    kind: hotspot
    param: user
    limit: 2
    window: 10s
`))
	require.NoError(t, err)
	c, _, _ := serve(t, sluiceenvoy.Config{Rules: rules})
	r := ask(t, c, "api", desc("user", "alice"))
	assert.Equal(t, uint32(1), r.Statuses[0].LimitRemaining)
	l := r.Statuses[0].CurrentLimit
	assert.Equal(t, rlsv3.RateLimitResponse_RateLimit_SECOND, l.Unit)
	assert.Equal(t, uint32(10), l.UnitMultiplier.GetValue())
	ask(t, c, "api", desc("user", "alice"))
	assert.Equal(t, rlsv3.RateLimitResponse_OVER_LIMIT, ask(t, c, "api", desc("user", "alice")).OverallCode)
	assert.Equal(t, rlsv3.RateLimitResponse_OK, ask(t, c, "api", desc("user", "bob")).OverallCode)
	// Other keys of the domain are no resource with rules: not limited.
	assert.Nil(t, ask(t, c, "api", desc("ip", "x")).Statuses[0].CurrentLimit)
	_, err = c.ShouldRateLimit(context.Background(), &rlsv3.RateLimitRequest{Domain: "web", Descriptors: []*ratelimitv3.RateLimitDescriptor{desc("a", "b")}})
	assert.Equal(t, codes.NotFound, status.Code(err))
}

// TestFloodKeepsLimitedAddress: a flood of new addresses, many more than
// the hotspot table holds, does not reset an address that is limited.
func TestFloodKeepsLimitedAddress(t *testing.T) {
	c, s, _ := serve(t, domain(t, "domain: d\ndescriptors:\n  - key: remote_address\n    rate_limit: {unit: hour, requests_per_unit: 2}\n"),
		sluiceenvoy.WithRuleDefaults(core.Rule{MaxKeys: 100}))
	ask(t, c, "d", desc("remote_address", "victim"))
	ask(t, c, "d", desc("remote_address", "victim"))
	require.Equal(t, rlsv3.RateLimitResponse_OVER_LIMIT, ask(t, c, "d", desc("remote_address", "victim")).OverallCode)
	ctx := context.Background()
	for i := range 20000 { // in process: the flood is the table's, not the network's
		_, err := s.ShouldRateLimit(ctx, &rlsv3.RateLimitRequest{Domain: "d", Descriptors: []*ratelimitv3.RateLimitDescriptor{desc("remote_address", strconv.Itoa(i))}})
		require.NoError(t, err)
	}
	assert.Equal(t, rlsv3.RateLimitResponse_OVER_LIMIT, ask(t, c, "d", desc("remote_address", "victim")).OverallCode)
}

// TestMaxOverrides: descriptors' limit overrides make at most
// WithMaxOverrides distinct limits; a request asking for one more is
// OVER_LIMIT, deciding none of its descriptors, with a problem document
// naming the bound. Before, it got ResourceExhausted, which Envoy lets
// through unlimited unless failure_mode_deny is set: with per-tenant limits
// from metadata, every tenant past the 64th distinct limit was unlimited.
func TestMaxOverrides(t *testing.T) {
	c, _, _ := serve(t, domain(t, edge), sluiceenvoy.WithMaxOverrides(2))
	for i, want := range []rlsv3.RateLimitResponse_Code{rlsv3.RateLimitResponse_OK, rlsv3.RateLimitResponse_OK, rlsv3.RateLimitResponse_OK, rlsv3.RateLimitResponse_OVER_LIMIT} {
		d := desc("generic_key", "free")
		d.Limit = &ratelimitv3.RateLimitDescriptor_RateLimitOverride{RequestsPerUnit: uint32(10 + min(i, 2)), Unit: typev3.RateLimitUnit_MINUTE}
		if i == 2 {
			d.Limit.RequestsPerUnit = 10 // a limit already asked for
		}
		r := ask(t, c, "edge", desc("remote_address", "a"), d)
		assert.Equal(t, want, r.OverallCode, "override %d", i)
		if want == rlsv3.RateLimitResponse_OVER_LIMIT {
			var doc map[string]any
			require.NoError(t, json.Unmarshal(r.RawBody, &doc))
			assert.Equal(t, "descriptor 1: limit override 12 per 1m0s: the server already has 2 distinct overrides, the most it takes (sluiceenvoy.WithMaxOverrides, sluice-rls -max-overrides): it will never pass (a bound of the server, which shadow mode lifts only when no limit that may apply is enforced)", doc["detail"])
			assert.Empty(t, header(r.ResponseHeadersToAdd, "Retry-After"))
		}
	}
	assert.Equal(t, uint32(0), ask(t, c, "edge", desc("remote_address", "a")).Statuses[0].LimitRemaining,
		"3 a minute: the refused request counted nothing")
	_, err := sluiceenvoy.New(nil, sluiceenvoy.Config{})
	assert.ErrorContains(t, err, "nil *core.Guard")
}

// TestNearLimitCountsHitsPastTheThreshold: a request of several hits counts
// near the limit only those past 80% of it, as the reference server does.
func TestNearLimitCountsHitsPastTheThreshold(t *testing.T) {
	c, s, _ := serve(t, domain(t, "domain: d\ndescriptors:\n  - key: k\n    rate_limit: {unit: minute, requests_per_unit: 10}"))
	d := desc("k", "v")
	for _, hits := range []uint64{7, 2, 1} { // counts 7, 9 (8 is the threshold), 10
		d.HitsAddend = wrapperspb.UInt64(hits)
		require.Equal(t, rlsv3.RateLimitResponse_OK, ask(t, c, "d", d).OverallCode)
	}
	st := s.DescriptorStats()
	require.Len(t, st, 1)
	assert.Equal(t, uint64(2), st[0].NearLimit, "hits 9 and 10")
	assert.Equal(t, uint64(10), st[0].WithinLimit)
}
