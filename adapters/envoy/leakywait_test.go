package sluiceenvoy_test

import (
	"context"
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
// every request the bucket was pacing.
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
	done := make(chan *rlsv3.RateLimitResponse)
	go func() { done <- call(5 * time.Second) }()
	require.NoError(t, fc.WaitForSleepers(context.Background(), 1))
	fc.Advance(10 * time.Second) // its turn, had the refused one given its turn back
	assert.Equal(t, rlsv3.RateLimitResponse_OK, (<-done).OverallCode, "a turn within the deadline is waited for")
}
