package sluiceenvoy_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	sluiceenvoy "github.com/sluicekit/sluice/adapters/envoy"
	"github.com/sluicekit/sluice/core/rulesfile"
)

// TestConcurrencyLimitAnswersAsHTTP: a descriptor of a domain of sluice
// rules rejected by a limit on requests in flight (the Guard's slot held
// by another request) is answered with the fields and problem the HTTP
// adapters send for it: RateLimit-Policy with qu="concurrent-requests",
// RateLimit without t, no Retry-After (a slot frees whenever a request
// ends) and the detail "... in flight". Before, the answer said
// "Retry-After: 0" (retry at once), a policy of no unit, and "allows 1
// requests per 0s; retry in 0s".
func TestConcurrencyLimitAnswersAsHTTP(t *testing.T) {
	rules, err := rulesfile.Parse([]byte("rules:\n  - {name: one, resource: api/user, kind: concurrency, limit: 1}\n"))
	require.NoError(t, err)
	c, s, _ := serve(t, sluiceenvoy.Config{Rules: rules})
	e, err := s.Guard().Enter(context.Background(), "api/user")
	require.NoError(t, err)
	defer e.Exit(nil)
	r := ask(t, c, "api", desc("user", "alice"))
	require.Equal(t, "OVER_LIMIT", r.OverallCode.String())
	assert.Equal(t, `"one";q=1;qu="concurrent-requests"`, header(r.ResponseHeadersToAdd, "RateLimit-Policy"))
	assert.Equal(t, `"one";r=0`, header(r.ResponseHeadersToAdd, "RateLimit"))
	assert.Empty(t, header(r.ResponseHeadersToAdd, "Retry-After"))
	var p struct{ Detail string }
	require.NoError(t, json.Unmarshal(r.RawBody, &p))
	assert.Equal(t, "api/user allows 1 requests in flight; retry when one ends", p.Detail)
}
