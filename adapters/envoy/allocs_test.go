//go:build !race

package sluiceenvoy_test

import (
	"context"
	"testing"

	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRequestPathAllocations: a decision of one descriptor allocates its
// response at once and, besides, only the strings it returns (the RateLimit
// header values) and the hotspot key: 2 allocations for a limit of a fixed
// value, 3 for a per-address one (20 and 26 before the response was
// allocated whole). Allocation counts do not depend on the machine's load;
// the race detector changes them, hence the build tag.
func TestRequestPathAllocations(t *testing.T) {
	p := newRequestPath(t)
	ctx := context.Background()
	for _, c := range []struct {
		name string
		req  *rlsv3.RateLimitRequest
		max  float64
	}{{"flow", p.fixed, 2}, {"hotspot", p.addrs[7], 3}} {
		var err error
		var resp *rlsv3.RateLimitResponse
		n := testing.AllocsPerRun(200, func() { resp, err = p.s.ShouldRateLimit(ctx, c.req) })
		require.NoError(t, err)
		require.Equal(t, rlsv3.RateLimitResponse_OK, resp.OverallCode)
		require.Len(t, resp.ResponseHeadersToAdd, 2, c.name)
		assert.LessOrEqual(t, n, c.max, c.name)
	}
}
