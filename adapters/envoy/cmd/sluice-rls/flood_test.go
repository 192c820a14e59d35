package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	ratelimitv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFloodLeavesConfiguredLimitsTheirMetrics: requests of 64 descriptors
// of client-chosen keys, which the rule api/* matches, fill the Guard's
// 10,000 resources; edge's limit, asked only after the flood, still has
// sluice metrics of its own on /metrics. Before, its requests counted
// under (overflow) (its decisions were right).
func TestFloodLeavesConfiguredLimitsTheirMetrics(t *testing.T) {
	dir := configDir(t)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "rules.yaml"), []byte("rules:\n  - {resource: api/*, kind: flow, limit: 1000000, window: 1m}\n"), 0o600))
	conn, httpAddr, _ := instance(t, "-config", dir)
	c := rlsv3.NewRateLimitServiceClient(conn)
	ctx := context.Background()
	for i := range 160 { // 160 x 64 keys
		ds := make([]*ratelimitv3.RateLimitDescriptor, 64)
		for j := range ds {
			ds[j] = &ratelimitv3.RateLimitDescriptor{Entries: []*ratelimitv3.RateLimitDescriptor_Entry{{Key: fmt.Sprint("k", 64*i+j), Value: "v"}}}
		}
		r, err := c.ShouldRateLimit(ctx, &rlsv3.RateLimitRequest{Domain: "api", Descriptors: ds})
		require.NoError(t, err)
		require.Equal(t, rlsv3.RateLimitResponse_OK, r.OverallCode)
	}
	for range 6 {
		_, err := c.ShouldRateLimit(ctx, req("remote_address", "10.0.0.1"))
		require.NoError(t, err)
	}
	resp, err := http.Get("http://" + httpAddr + "/metrics")
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	for _, want := range []string{
		`sluice_requests_total{sluice_resource="edge.remote_address",sluice_result="passed"} 5`,
		`sluice_requests_total{sluice_resource="edge.remote_address",sluice_result="hotspot"} 1`,
		`sluice_requests_total{sluice_resource="(overflow)",sluice_result="passed"} 240`,
	} {
		assert.Contains(t, string(body), want)
	}
	api := regexp.MustCompile(`(?m)^sluice_requests_total\{sluice_resource="api/k[0-9]+",sluice_result="passed"\} 1$`)
	assert.Len(t, api.FindAll(body, -1), 10_000, "the flood's resources")
}
