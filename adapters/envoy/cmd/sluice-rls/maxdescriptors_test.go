package main

import (
	"bytes"
	"context"
	"testing"

	ratelimitv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMaxDescriptorsFlag: -max-descriptors bounds the descriptors of a
// request, which is OVER_LIMIT beyond it, none decided (Envoy answers
// 429; before, InvalidArgument, which Envoy lets through unless
// failure_mode_deny is set); a bound below 1 is a usage error.
func TestMaxDescriptorsFlag(t *testing.T) {
	conn, _, _ := instance(t, "-config", configDir(t), "-max-descriptors", "2")
	c := rlsv3.NewRateLimitServiceClient(conn)
	two := req("remote_address", "a")
	two.Descriptors = append(two.Descriptors, two.Descriptors[0])
	r, err := c.ShouldRateLimit(context.Background(), two)
	require.NoError(t, err)
	assert.Equal(t, uint32(3), r.Statuses[1].LimitRemaining, "5 a minute")
	three := &rlsv3.RateLimitRequest{Domain: "edge", Descriptors: append([]*ratelimitv3.RateLimitDescriptor{two.Descriptors[0]}, two.Descriptors...)}
	r, err = c.ShouldRateLimit(context.Background(), three)
	require.NoError(t, err)
	assert.Equal(t, rlsv3.RateLimitResponse_OVER_LIMIT, r.OverallCode)
	r, err = c.ShouldRateLimit(context.Background(), two)
	require.NoError(t, err)
	assert.Equal(t, uint32(1), r.Statuses[1].LimitRemaining, "the refused request counted nothing")

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out bytes.Buffer
	assert.Equal(t, 2, run(ctx, []string{"-config", configDir(t), "-max-descriptors", "0", "-listen", "127.0.0.1:0", "-http", ""}, func(string) string { return "" }, &out, nil))
	assert.Contains(t, out.String(), "-max-descriptors must be >= 1 and -max-overrides >= 0, got 0 and 64")
	out.Reset()
	assert.Equal(t, 2, run(ctx, []string{"-config", configDir(t), "-listen", "127.0.0.1:0", "-http", ""}, func(k string) string {
		if k == "SLUICE_RLS_MAX_DESCRIPTORS" {
			return "many"
		}
		return ""
	}, &out, nil))
	assert.Contains(t, out.String(), `$SLUICE_RLS_MAX_DESCRIPTORS must be an integer, got "many"`)
}

// TestMaxOverridesFlag: -max-overrides bounds the distinct limits that
// descriptors' limit overrides ask for; a request asking for one more is
// OVER_LIMIT. Before, the bound was fixed at 64 and a request beyond it got
// ResourceExhausted, which Envoy lets through unless failure_mode_deny.
func TestMaxOverridesFlag(t *testing.T) {
	conn, _, _ := instance(t, "-config", configDir(t), "-max-overrides", "1")
	c := rlsv3.NewRateLimitServiceClient(conn)
	for i, rpu := range []uint32{7, 7, 8} {
		r := req("remote_address", "a")
		r.Descriptors[0].Limit = &ratelimitv3.RateLimitDescriptor_RateLimitOverride{RequestsPerUnit: rpu, Unit: typev3.RateLimitUnit_MINUTE}
		resp, err := c.ShouldRateLimit(context.Background(), r)
		require.NoError(t, err)
		want := rlsv3.RateLimitResponse_OK
		if rpu == 8 { // a second distinct override
			want = rlsv3.RateLimitResponse_OVER_LIMIT
		}
		assert.Equal(t, want, resp.OverallCode, "request %d: %d a minute", i, rpu)
	}
}
