package core_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/clock"
)

// TestClientsHangingUpOpenNoBreaker: a hostile client sends requests and
// hangs up (context.Canceled), or sets a 1 ms deadline (DeadlineExceeded),
// against an error-ratio breaker. Its requests are no errors of the
// service: the breaker stays closed for everyone, a probe it hangs up
// gives its place to the next request, and real errors still trip it.
// Failed before: 10 hang-ups opened the breaker for 5 s, a hung-up probe
// opened it again. A slow-ratio breaker still counts a slow request whose
// caller gave up.
func TestClientsHangingUpOpenNoBreaker(t *testing.T) {
	for _, gone := range []error{context.Canceled, fmt.Errorf("handler: %w", context.DeadlineExceeded)} {
		fc := clock.NewFake(time.Hour)
		g, err := core.New(core.WithClock(fc), core.WithRules(core.Rule{Name: "b", Resource: "GET /x", Kind: core.KindBreaker,
			Strategy: "error-ratio", Threshold: 0.5, MinRequests: 10, OpenFor: 5 * time.Second}))
		require.NoError(t, err)
		for i := range 100 {
			require.NoError(t, call(g, fc, "GET /x", time.Millisecond, gone), "%v: request %d", gone, i)
		}
		require.NoError(t, call(g, fc, "GET /x", time.Millisecond, nil), "%v: the breaker is closed", gone)

		for range 9 { // real errors trip it: 9 of 10 requests
			require.NoError(t, call(g, fc, "GET /x", time.Millisecond, errFailed))
		}
		require.Error(t, call(g, fc, "GET /x", 0, nil), "%v: nine errors of ten open it", gone)
		fc.Advance(5 * time.Second)
		require.NoError(t, call(g, fc, "GET /x", time.Millisecond, gone), "%v: the probe", gone)
		require.NoError(t, call(g, fc, "GET /x", time.Millisecond, nil), "%v: a hung-up probe gives its place", gone)
		require.NoError(t, call(g, fc, "GET /x", time.Millisecond, nil), "%v: the probe that succeeded closed it", gone)
		g.Close()
	}

	fc := clock.NewFake(time.Hour)
	g, err := core.New(core.WithClock(fc), core.WithRules(core.Rule{Name: "slow", Resource: "GET /x", Kind: core.KindBreaker,
		Strategy: "slow-ratio", MaxRT: 100 * time.Millisecond, Threshold: 0.5, MinRequests: 10}))
	require.NoError(t, err)
	defer g.Close()
	for range 10 {
		require.NoError(t, call(g, fc, "GET /x", time.Second, context.Canceled))
	}
	assert.Error(t, call(g, fc, "GET /x", 0, nil), "slow requests whose callers gave up are slow")
}
