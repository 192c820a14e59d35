package sluiceenvoy_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	bootstrapv3 "github.com/envoyproxy/go-control-plane/envoy/config/bootstrap/v3"
	ratelimitfilterv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/ratelimit/v3"
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/router/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/upstreams/http/v3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
	"google.golang.org/protobuf/encoding/protojson"
)

// TestReadmeEnvoyConfig: the Envoy configuration of README.md is a valid
// Envoy bootstrap (decoded by Envoy's own generated types, with their
// validation rules), whose ratelimit filter asks the RLS v3 API.
func TestReadmeEnvoyConfig(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	require.NoError(t, err)
	_, after, ok := strings.Cut(string(readme), "## Envoy configuration\n\n```yaml\n")
	require.True(t, ok, "README.md has no Envoy configuration")
	block, _, ok := strings.Cut(after, "```")
	require.True(t, ok)
	var v any
	require.NoError(t, yaml.Unmarshal([]byte(block), &v))
	js, err := json.Marshal(v)
	require.NoError(t, err)
	var b bootstrapv3.Bootstrap
	require.NoError(t, protojson.Unmarshal(js, &b))
	require.NoError(t, b.ValidateAll())

	hcm := &hcmv3.HttpConnectionManager{}
	require.NoError(t, b.StaticResources.Listeners[0].FilterChains[0].Filters[0].GetTypedConfig().UnmarshalTo(hcm))
	rl := &ratelimitfilterv3.RateLimit{}
	require.NoError(t, hcm.HttpFilters[0].GetTypedConfig().UnmarshalTo(rl))
	require.NoError(t, rl.ValidateAll())
	assert.Equal(t, "edge", rl.Domain)
	assert.Equal(t, "sluice_rls", rl.RateLimitService.GrpcService.GetEnvoyGrpc().ClusterName)
	assert.Equal(t, "V3", rl.RateLimitService.TransportApiVersion.String())
}
