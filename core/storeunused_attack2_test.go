package core_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/clock"
	"github.com/sluicekit/sluice/core/store"
)

// TestStoreHealthAfterModeUnused opens the exact breaker of a store, then
// reloads its rule out of exact mode (to approximate mode, or off the
// store: what an operator does during a Redis outage), and the store
// works again. Nothing calls the exact mode any more, so nothing probes
// it: the store must not stay down for readiness (health.RequireStores),
// the dashboard and the store_healthy metric.
//
// Failed before a mode no rule uses stopped counting: the store was
// reported down for good (Healthy false an hour later), and an instance
// with RequireStores never ready again.
func TestStoreHealthAfterModeUnused(t *testing.T) {
	for _, how := range []string{"approximate", "off the store"} {
		t.Run(how, func(t *testing.T) {
			s := newScripted(t)
			fc := clock.NewFake(time.Hour)
			g := breakerGuard(t, s, fc, core.WithStoreBreaker(1, time.Second))
			defer g.Close()
			s.fail.Store(true)
			enterX(t, g)
			require.False(t, g.Stores()[0].Healthy, "the exact breaker opened")
			r := g.Rules()[0]
			if how == "approximate" {
				r.Mode = store.Approximate
			} else {
				r.Store, r.Mode, r.OnFailure, r.LocalLimit = "", "", "", 0
			}
			require.NoError(t, g.SetRules([]core.Rule{r}))
			s.fail.Store(false)
			for range 10 {
				fc.Advance(time.Second)
				enterX(t, g)
			}
			fc.Advance(time.Hour)
			assert.True(t, g.Stores()[0].Healthy, "%+v", g.Stores()[0])
		})
	}
}
