package main

import (
	"bytes"
	"context"
	"testing"

	ratelimitv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestMaxDescriptorsFlag: -max-descriptors bounds the descriptors of a
// request that are decided; beyond it the request is OVER_LIMIT, deciding
// nothing, by default, and with -beyond-max-descriptors first its first
// descriptors are decided, with error it gets InvalidArgument. A bound
// below 1 or another policy is a usage error.
func TestMaxDescriptorsFlag(t *testing.T) {
	two := req("remote_address", "a")
	two.Descriptors = append(two.Descriptors, two.Descriptors[0])
	three := &rlsv3.RateLimitRequest{Domain: "edge", Descriptors: append([]*ratelimitv3.RateLimitDescriptor{two.Descriptors[0]}, two.Descriptors...)}
	for _, beyond := range []string{"", "first", "error"} {
		args := []string{"-config", configDir(t), "-max-descriptors", "2"}
		if beyond != "" {
			args = append(args, "-beyond-max-descriptors", beyond)
		}
		conn, _, _ := instance(t, args...)
		c := rlsv3.NewRateLimitServiceClient(conn)
		r, err := c.ShouldRateLimit(context.Background(), two)
		require.NoError(t, err)
		assert.Equal(t, uint32(3), r.Statuses[1].LimitRemaining, "5 a minute")
		r, err = c.ShouldRateLimit(context.Background(), three)
		switch beyond {
		case "":
			require.NoError(t, err)
			assert.Equal(t, rlsv3.RateLimitResponse_OVER_LIMIT, r.OverallCode)
		case "first":
			require.NoError(t, err)
			assert.Equal(t, rlsv3.RateLimitResponse_OK, r.OverallCode)
			assert.Equal(t, []uint32{2, 1, 0}, []uint32{r.Statuses[0].LimitRemaining, r.Statuses[1].LimitRemaining, r.Statuses[2].LimitRemaining})
		case "error":
			assert.Equal(t, codes.InvalidArgument, status.Code(err), "%v", err)
		}
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out bytes.Buffer
	assert.Equal(t, 2, run(ctx, []string{"-config", configDir(t), "-max-descriptors", "0", "-listen", "127.0.0.1:0", "-http", ""}, func(string) string { return "" }, &out, nil))
	assert.Contains(t, out.String(), "-max-descriptors must be >= 1, got 0")
	out.Reset()
	assert.Equal(t, 2, run(ctx, []string{"-config", configDir(t), "-listen", "127.0.0.1:0", "-http", ""}, func(k string) string {
		if k == "SLUICE_RLS_MAX_DESCRIPTORS" {
			return "many"
		}
		return ""
	}, &out, nil))
	assert.Contains(t, out.String(), `$SLUICE_RLS_MAX_DESCRIPTORS must be an integer, got "many"`)
	out.Reset()
	assert.Equal(t, 2, run(ctx, []string{"-config", configDir(t), "-beyond-max-descriptors", "allow"}, func(string) string { return "" }, &out, nil))
	assert.Contains(t, out.String(), `-beyond-max-descriptors must be deny, first or error, got "allow"`)
}
