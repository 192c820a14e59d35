package core_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/breaker"
	"github.com/sluicekit/sluice/core/clock"
)

// TestBreakerReloadThatChangesWhatIsBadStartsCountingAfresh: a reload that
// changes what a breaker counts as bad (its strategy, or a slow-ratio
// breaker's MaxRT) keeps its state (open stays open) but not its counts
// of bad requests, which meant something else. Before, they were kept: an
// error-ratio breaker that had seen 8 fast errors in 10, switched to
// slow-ratio (MaxRT 100ms, half of at least 10), tripped on the first
// slow request ("slow ratio 0.818 >= 0.5 of 11 requests", with 1 slow of
// 11), and a slow-ratio breaker whose MaxRT was raised from 100ms to 1s
// tripped on the first request over 1s for 8 that took 200ms.
func TestBreakerReloadThatChangesWhatIsBadStartsCountingAfresh(t *testing.T) {
	errorRatio := core.Rule{Name: "brk", Resource: "GET /x", Kind: core.KindBreaker, Strategy: "error-ratio",
		Threshold: 0.9, MinRequests: 10, Window: time.Minute}
	slow := func(maxRT time.Duration) core.Rule {
		return core.Rule{Name: "brk", Resource: "GET /x", Kind: core.KindBreaker, Strategy: "slow-ratio", MaxRT: maxRT,
			Threshold: 0.5, MinRequests: 10, Window: time.Minute}
	}
	for name, tc := range map[string]struct {
		before, after core.Rule
		bad           func(g *core.Guard, fc *clock.Fake) error // a bad request before the reload, good after it
		slowRT        time.Duration                             // a slow request after the reload
	}{
		"error-ratio to slow-ratio": {errorRatio, slow(100 * time.Millisecond),
			func(g *core.Guard, fc *clock.Fake) error { return call(g, fc, "GET /x", time.Millisecond, errFailed) }, time.Second},
		"slow-ratio, MaxRT raised": {slow(100 * time.Millisecond), slow(time.Second),
			func(g *core.Guard, fc *clock.Fake) error { return call(g, fc, "GET /x", 200*time.Millisecond, nil) }, 2 * time.Second},
	} {
		t.Run(name, func(t *testing.T) {
			before := tc.before
			before.Threshold = 0.9
			g, fc := newGuard(t, before)
			for range 8 {
				require.NoError(t, tc.bad(g, fc))
			}
			for range 2 {
				require.NoError(t, call(g, fc, "GET /x", time.Millisecond, nil))
			}
			require.NoError(t, g.SetRules([]core.Rule{tc.after}))
			require.NoError(t, call(g, fc, "GET /x", tc.slowRT, nil), "the first slow request")
			st := g.Snapshot().Rules[0].Breaker
			assert.Equal(t, breaker.Closed, st.State, "%+v", *st)
			assert.Zero(t, st.Trips, "1 slow request of 1 counted since what is slow changed")
		})
	}
}
