package core_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/clock"
)

// TestClientsHangingUpFastKeepNoSlowBreakerClosed: a request whose caller
// hangs up before MaxRT tells nothing of how slow the service is. Against
// a slow-ratio breaker (MaxRT 100ms, half of at least 10), with every
// request the service completes taking 1 s, a client that sends 3
// requests for each completed one and hangs up after 10 ms
// (context.Canceled, or its own 10 ms deadline) must not keep the
// breaker closed, and a probe it hangs up must not close an open one:
// the probe's place goes to the next request. Before, each hang-up counted
// as a fast request: 10 slow of 40 (0.25) kept the breaker closed for
// good, and one hung-up probe closed it, letting everyone through to the
// slow service again.
func TestClientsHangingUpFastKeepNoSlowBreakerClosed(t *testing.T) {
	for _, gone := range []error{context.Canceled, context.DeadlineExceeded} {
		fc := clock.NewFake(time.Hour)
		g, err := core.New(core.WithClock(fc), core.WithRules(core.Rule{Name: "slow", Resource: "GET /x", Kind: core.KindBreaker,
			Strategy: "slow-ratio", MaxRT: 100 * time.Millisecond, Threshold: 0.5, MinRequests: 10, Window: time.Minute, OpenFor: 5 * time.Second}))
		require.NoError(t, err)
		admitted := 0
		for range 10 {
			for range 3 {
				if call(g, fc, "GET /x", 10*time.Millisecond, gone) == nil {
					admitted++
				}
			}
			if call(g, fc, "GET /x", time.Second, nil) == nil {
				admitted++
			}
		}
		t.Logf("%v: %d of 40 admitted, breaker %+v", gone, admitted, *g.Snapshot().Rules[0].Breaker)
		require.Error(t, call(g, fc, "GET /x", 0, nil), "%v: every request the service completed was slow: the breaker is open", gone)

		fc.Advance(5 * time.Second)
		require.NoError(t, call(g, fc, "GET /x", 10*time.Millisecond, gone), "%v: the probe", gone)
		require.NoError(t, call(g, fc, "GET /x", time.Second, nil), "%v: a hung-up probe gives its place to the next request", gone)
		assert.Error(t, call(g, fc, "GET /x", 0, nil), "%v: the slow probe opened it again", gone)
		g.Close()
	}
}
