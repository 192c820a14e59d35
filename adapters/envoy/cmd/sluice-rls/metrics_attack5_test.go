package main

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMetricsOfLimitsOfOnePath: the limits of "a.b" and of "b" under "a",
// a config the reference server takes, have one statistics name,
// edge.a.b. /metrics answers 200, their hits added up under that key, as
// the reference's statistics of one name add up. Before, the two limits
// made two series of the same name and labels, and every scrape of
// sluice-rls failed with 500, sluice's own metrics with it.
func TestMetricsOfLimitsOfOnePath(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "edge.yaml"), []byte(`domain: edge
descriptors:
  - key: a.b
    rate_limit: {unit: minute, requests_per_unit: 5}
  - key: a
    descriptors:
      - key: b
        rate_limit: {unit: minute, requests_per_unit: 7}
`), 0o600))
	conn, httpAddr, _ := instance(t, "-config", dir)
	c := rlsv3.NewRateLimitServiceClient(conn)
	for _, r := range []*rlsv3.RateLimitRequest{req("a.b", "x"), req("a", "x", "b", "y"), req("a", "x", "b", "z")} {
		resp, err := c.ShouldRateLimit(context.Background(), r)
		require.NoError(t, err)
		require.Equal(t, rlsv3.RateLimitResponse_OK, resp.OverallCode)
		require.NotNil(t, resp.Statuses[0].CurrentLimit, "a limit applied")
	}
	resp, err := http.Get("http://" + httpAddr + "/metrics")
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	assert.Contains(t, string(body), `ratelimit_service_rate_limit_total_hits{domain="edge",key="a.b"} 3`)
	assert.Contains(t, string(body), `ratelimit_service_rate_limit_within_limit{domain="edge",key="a.b"} 3`)
	assert.Contains(t, string(body), `sluice_requests_total`)
}
