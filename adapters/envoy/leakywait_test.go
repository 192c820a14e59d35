package sluiceenvoy_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	sluiceenvoy "github.com/sluicekit/sluice/adapters/envoy"
	"github.com/sluicekit/sluice/core"
)

// TestWaitBeyondDeadlineIsOverLimit: a leaky-bucket rule paces requests,
// but Envoy waits for the answer only until its timeout (the call's gRPC
// deadline, 20 ms by default) and then lets the request through unless
// failure_mode_deny is set. A request whose turn would come after that is
// answered OVER_LIMIT before the deadline, its turn given back; one whose
// turn comes in time waits for it. Before, every call that waited past
// the deadline got DeadlineExceeded, so that Envoy let through, unlimited,
// every request the bucket was pacing. The refusal carries Retry-After,
// the RateLimit fields and the problem document, as the others do (it had
// none).
func TestWaitBeyondDeadlineIsOverLimit(t *testing.T) {
	rules := []core.Rule{{Name: "paced", Resource: "api/*", Kind: core.KindFlow, Limit: 1, Window: 10 * time.Second,
		Algorithm: core.AlgorithmLeakyBucket, MaxWait: time.Minute}}
	rpc, _, fc := serve(t, sluiceenvoy.Config{Rules: rules})
	call := func(timeout time.Duration) *rlsv3.RateLimitResponse {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		r, err := rpc.ShouldRateLimit(ctx, &rlsv3.RateLimitRequest{Domain: "api", Descriptors: descs(0, 1)})
		require.NoError(t, err, "an answer before the deadline")
		return r
	}
	assert.Equal(t, rlsv3.RateLimitResponse_OK, call(time.Minute).OverallCode, "its turn is now")
	// Its turn 10 s away on the Guard's clock, which stands still: answered
	// after 3 s, 1 s before the deadline.
	r := call(4 * time.Second)
	assert.Equal(t, rlsv3.RateLimitResponse_OVER_LIMIT, r.OverallCode)
	assert.Equal(t, rlsv3.RateLimitResponse_OVER_LIMIT, r.Statuses[0].Code)
	// As any other refusal: Retry-After, RateLimit fields and the problem
	// document, of its turn at most maxWait (1 minute) away.
	assert.Equal(t, "60", header(r.ResponseHeadersToAdd, "Retry-After"))
	assert.Equal(t, `"paced";q=1;w=10`, header(r.ResponseHeadersToAdd, "RateLimit-Policy"))
	assert.Equal(t, `"paced";r=0;t=60`, header(r.ResponseHeadersToAdd, "RateLimit"))
	assert.Equal(t, "application/problem+json", header(r.ResponseHeadersToAdd, "Content-Type"))
	assert.Equal(t, time.Minute, r.Statuses[0].DurationUntilReset.AsDuration())
	assert.Equal(t, uint32(1), r.Statuses[0].GetCurrentLimit().GetRequestsPerUnit())
	var doc map[string]any
	require.NoError(t, json.Unmarshal(r.RawBody, &doc))
	assert.Equal(t, "paced", doc["rule"])
	assert.EqualValues(t, 60, doc["retryAfter"])
	assert.Equal(t, []any{"paced"}, doc["violated-policies"])
	done := make(chan *rlsv3.RateLimitResponse)
	go func() { done <- call(5 * time.Second) }()
	require.NoError(t, fc.WaitForSleepers(context.Background(), 1))
	fc.Advance(10 * time.Second) // its turn, had the refused one given its turn back
	assert.Equal(t, rlsv3.RateLimitResponse_OK, (<-done).OverallCode, "a turn within the deadline is waited for")
}
