package sluiceenvoy_test

import (
	"testing"

	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	sluiceenvoy "github.com/sluicekit/sluice/adapters/envoy"
)

// TestReloadKeepsEachLimitItsName: the limit of b.c in domain a and that of
// c in domain a.b (per value) have one path, a.b.c. A reload that adds the file of
// domain a.b, sorted before a's, leaves a's limit its name, so its counts
// and statistics: a client a limited stays limited, and each limit's
// statistics are its own. Before, a.b's limit took the name, and with it
// a's counts and statistics (reported as domain a's), while a's limit
// started afresh as a.b.c#2.
func TestReloadKeepsEachLimitItsName(t *testing.T) {
	parse := func(file, yaml string) sluiceenvoy.Domain {
		d, err := sluiceenvoy.ParseDomain(file, []byte(yaml))
		require.NoError(t, err)
		return d
	}
	a := parse("a.yaml", "domain: a\ndescriptors:\n  - key: b\n    descriptors:\n      - key: c\n        rate_limit: {unit: minute, requests_per_unit: 3}\n")
	ab := parse("a.b.yaml", "domain: a.b\ndescriptors:\n  - key: c\n    rate_limit: {unit: minute, requests_per_unit: 3}\n")
	rpc, s, _ := serve(t, sluiceenvoy.Config{Domains: []sluiceenvoy.Domain{a}})
	for range 3 {
		require.Equal(t, rlsv3.RateLimitResponse_OK, ask(t, rpc, "a", desc("b", "x", "c", "y")).OverallCode)
	}
	require.NoError(t, s.SetConfig(sluiceenvoy.Config{Domains: []sluiceenvoy.Domain{ab, a}}))
	assert.Equal(t, rlsv3.RateLimitResponse_OVER_LIMIT, ask(t, rpc, "a", desc("b", "x", "c", "y")).OverallCode, "a's count kept")
	assert.Equal(t, rlsv3.RateLimitResponse_OK, ask(t, rpc, "a.b", desc("c", "y")).OverallCode)
	var got []sluiceenvoy.DescriptorStats
	for _, st := range s.DescriptorStats() {
		st.Rule = ""
		got = append(got, st)
	}
	assert.Equal(t, []sluiceenvoy.DescriptorStats{
		{Domain: "a", Key: "b.c", TotalHits: 4, OverLimit: 1, WithinLimit: 3, NearLimit: 1},
		{Domain: "a.b", Key: "c", TotalHits: 1, WithinLimit: 1},
	}, got)
}
