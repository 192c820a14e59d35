package oracle

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"testing"
	"time"

	ratelimitv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/types/known/wrapperspb"

	sluiceenvoy "github.com/sluicekit/sluice/adapters/envoy"
	"github.com/sluicekit/sluice/core"
)

// config uses hour and day units only: within a test run neither server's
// window ends (the reference's fixed windows start on the hour, the test
// waits when it runs in the last minute of one).
const config = `domain: oracle
descriptors:
  - key: remote_address
    rate_limit: {unit: hour, requests_per_unit: 3}
  - key: generic_key
    value: fixed
    rate_limit: {unit: hour, requests_per_unit: 2, name: fixed}
  - key: generic_key
    value: free
  - key: generic_key
    value: zero
    rate_limit: {unit: hour, requests_per_unit: 0}
  - key: generic_key
    value: vip
    rate_limit: {unlimited: true}
  - key: path
    value: /api/*
    rate_limit: {unit: hour, requests_per_unit: 1}
  - key: tenant
    descriptors:
      - key: plan
        value: gold
        rate_limit: {unit: day, requests_per_unit: 4, replaces: [{name: fixed}]}
      - key: plan
        rate_limit: {unit: day, requests_per_unit: 2}
  - key: shadow
    shadow_mode: true
    rate_limit: {unit: hour, requests_per_unit: 1}
  - key: a_b
    rate_limit: {unit: hour, requests_per_unit: 1}
  - key: files
    value: doc*
    share_threshold: true
    detailed_metric: true
    rate_limit: {unit: hour, requests_per_unit: 2}
  - key: files
    value: img*
    value_to_metric: true
    rate_limit: {unit: hour, requests_per_unit: 1}
`

type step struct {
	name   string
	ds     []*ratelimitv3.RateLimitDescriptor
	hits   uint32
	domain string
}

func d(kv ...string) *ratelimitv3.RateLimitDescriptor {
	out := &ratelimitv3.RateLimitDescriptor{}
	for i := 0; i+1 < len(kv); i += 2 {
		out.Entries = append(out.Entries, &ratelimitv3.RateLimitDescriptor_Entry{Key: kv[i], Value: kv[i+1]})
	}
	return out
}

func withHits(x *ratelimitv3.RateLimitDescriptor, n uint64) *ratelimitv3.RateLimitDescriptor {
	x.HitsAddend = wrapperspb.UInt64(n)
	return x
}

func steps() []step {
	var s []step
	add := func(name string, hits uint32, ds ...*ratelimitv3.RateLimitDescriptor) {
		s = append(s, step{name: name, ds: ds, hits: hits})
	}
	for i := range 5 {
		add(fmt.Sprint("address ", i), 0, d("remote_address", "10.0.0.1"))
	}
	add("other address", 0, d("remote_address", "10.0.0.2"))
	add("request hits_addend", 2, d("remote_address", "10.0.0.3"))
	add("request hits_addend again", 1, d("remote_address", "10.0.0.3"))
	add("descriptor hits_addend", 5, withHits(d("remote_address", "10.0.0.4"), 3))
	for i := range 3 {
		add(fmt.Sprint("fixed ", i), 0, d("generic_key", "fixed"))
	}
	add("whitelisted", 0, d("generic_key", "free"))
	add("zero", 0, d("generic_key", "zero"))
	add("unlimited", 0, d("generic_key", "vip"))
	add("unmatched value", 0, d("generic_key", "other"))
	add("unmatched key", 0, d("nothing", "x"))
	add("wildcard a", 0, d("path", "/api/a"))
	add("wildcard a again", 0, d("path", "/api/a"))
	add("wildcard b", 0, d("path", "/api/b"))
	add("wildcard miss", 0, d("path", "/web"))
	add("depth short", 0, d("tenant", "t1"))
	add("depth long", 0, d("tenant", "t1", "plan", "gold", "x", "y"))
	for i := range 5 {
		add(fmt.Sprint("nested gold ", i), 0, d("tenant", "t1", "plan", "gold"))
	}
	for i := range 3 {
		add(fmt.Sprint("nested any plan ", i), 0, d("tenant", "t2", "plan", "silver"))
	}
	add("replaces", 0, d("generic_key", "fixed"), d("tenant", "t3", "plan", "gold"))
	add("mixed", 0, d("generic_key", "free"), d("remote_address", "10.0.0.1"), d("generic_key", "vip"))
	for i := range 3 {
		add(fmt.Sprint("shadow ", i), 0, d("shadow", "s"))
	}
	for _, f := range []string{"doc1", "doc2", "doc3", "img1", "img1", "img2"} {
		add("share_threshold "+f, 0, d("files", f))
	}
	add("final key quirk a_b", 0, d("a", "b"))
	add("final key quirk a_b again", 0, d("a_b", "z"))
	s = append(s, step{name: "unknown domain", ds: []*ratelimitv3.RateLimitDescriptor{d("k", "v")}, domain: "nowhere"})
	return s
}

func serveSluice(t *testing.T, cfg sluiceenvoy.Config) string {
	g, err := core.New(core.WithShadowQuotas(), core.WithLogger(slog.New(slog.DiscardHandler)))
	require.NoError(t, err)
	t.Cleanup(func() { _ = g.Close() })
	s, err := sluiceenvoy.New(g, cfg, sluiceenvoy.WithUnknownDomainOK())
	require.NoError(t, err)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := grpc.NewServer()
	s.Register(srv)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	return lis.Addr().String()
}

func client(t *testing.T, addr string) rlsv3.RateLimitServiceClient {
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	return rlsv3.NewRateLimitServiceClient(conn)
}

// TestSameAnswersAsReference sends the same requests to envoyproxy/ratelimit
// and to sluice, both with one config, and compares the overall code and,
// per descriptor, the code, current limit and remaining count. Not
// compared: duration_until_reset (the reference's fixed window ends on the
// unit's boundary; sluice's windows slide or refill).
func TestSameAnswersAsReference(t *testing.T) {
	if testing.Short() {
		t.Skip("builds envoyproxy/ratelimit")
	}
	if now := time.Now().UTC(); now.Minute() == 59 { // stay within one hour window
		time.Sleep(time.Until(now.Truncate(time.Minute).Add(time.Minute + time.Second)))
	}
	rdb, err := Redis()
	if err != nil {
		t.Skip("no redis-server:", err)
	}
	defer rdb.Stop()
	bin, err := Build(t.TempDir())
	require.NoError(t, err)
	ref, err := Reference(bin, t.TempDir(), rdb.Addr, map[string]string{"oracle.yaml": config})
	require.NoError(t, err)
	defer ref.Stop()

	dom, err := sluiceenvoy.ParseDomain("oracle.yaml", []byte(config))
	require.NoError(t, err)
	sl := client(t, serveSluice(t, sluiceenvoy.Config{Domains: []sluiceenvoy.Domain{dom}}))
	rf := client(t, ref.Addr)
	ctx := context.Background()
	for _, st := range steps() {
		dm := st.domain
		if dm == "" {
			dm = "oracle"
		}
		req := &rlsv3.RateLimitRequest{Domain: dm, Descriptors: st.ds, HitsAddend: st.hits}
		want, err := rf.ShouldRateLimit(ctx, req)
		require.NoError(t, err, st.name)
		got, err := sl.ShouldRateLimit(ctx, req)
		require.NoError(t, err, st.name)
		assert.Equal(t, want.OverallCode, got.OverallCode, st.name)
		require.Len(t, got.Statuses, len(want.Statuses), st.name)
		for i, w := range want.Statuses {
			g := got.Statuses[i]
			assert.Equal(t, w.Code, g.Code, "%s: status %d code", st.name, i)
			assert.Equal(t, w.LimitRemaining, g.LimitRemaining, "%s: status %d remaining", st.name, i)
			assert.Equal(t, w.CurrentLimit.GetRequestsPerUnit(), g.CurrentLimit.GetRequestsPerUnit(), "%s: status %d limit", st.name, i)
			assert.Equal(t, w.CurrentLimit.GetUnit(), g.CurrentLimit.GetUnit(), "%s: status %d unit", st.name, i)
			assert.Equal(t, w.CurrentLimit.GetName(), g.CurrentLimit.GetName(), "%s: status %d name", st.name, i)
		}
	}

	// The documented difference: a rejected hit is not counted. Of 3, a
	// cost of 2 passes, a second cost of 2 is rejected by both; the
	// reference counted it, so a cost of 1 is rejected there, and passes
	// here, taking the last of the quota.
	codes := func(c rlsv3.RateLimitServiceClient) []rlsv3.RateLimitResponse_Code {
		var out []rlsv3.RateLimitResponse_Code
		for _, hits := range []uint32{2, 2, 1, 1} {
			r, err := c.ShouldRateLimit(ctx, &rlsv3.RateLimitRequest{Domain: "oracle", HitsAddend: hits,
				Descriptors: []*ratelimitv3.RateLimitDescriptor{d("remote_address", "10.9.9.9")}})
			require.NoError(t, err)
			out = append(out, r.OverallCode)
		}
		return out
	}
	ok, over := rlsv3.RateLimitResponse_OK, rlsv3.RateLimitResponse_OVER_LIMIT
	assert.Equal(t, []rlsv3.RateLimitResponse_Code{ok, over, over, over}, codes(rf))
	assert.Equal(t, []rlsv3.RateLimitResponse_Code{ok, over, ok, over}, codes(sl))
}
