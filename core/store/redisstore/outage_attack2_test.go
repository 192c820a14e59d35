package redisstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/store"
	"github.com/sluicekit/sluice/core/store/redisstore"
	"github.com/sluicekit/sluice/core/store/redisstore/internal/redistest"
)

// TestApproxNeverSyncedDuringOutage gives an approximate rule keys that
// have never read Redis's counts while Redis is down: a Guard started
// during the outage (an instance restarted, or scaled out), and an exact
// rule moved to approximate by a reload during it. The instance knows
// nothing of what the others admitted, so its local limit is all it may
// admit: "N·LocalLimit in each window after [the switch]" (package doc).
//
// Failed before a key that never synchronized was refused: the Store
// decided it locally on zero counts for the sync age (over 1s), so the
// instance admitted the rule's global limit, 100 of 100 requests, where
// the local limit is 10.
func TestApproxNeverSyncedDuringOutage(t *testing.T) {
	const limit, localLimit = 100, 10
	for _, how := range []string{"started", "reloaded"} {
		t.Run(how, func(t *testing.T) {
			srv := redistest.StartOwned(t)
			r := core.Rule{Name: "r", Resource: "GET /x", Kind: core.KindFlow, Limit: limit, Window: time.Hour,
				Store: "redis", LocalLimit: localLimit}
			if how == "started" {
				srv.Kill()
				r.Mode = store.Approximate
			}
			in := newInstance(t, srv, redistest.UniquePrefix(), []redisstore.Option{redisstore.WithTimeout(200 * time.Millisecond)},
				core.WithRules(r))
			enter := func() error {
				e, err := in.g.Enter(context.Background(), "GET /x")
				e.Exit(nil)
				return err
			}
			if how == "reloaded" {
				srv.Kill()
				for range localLimit { // the exact rule's fallback used up
					require.NoError(t, enter())
				}
				require.Error(t, enter())
				r.Mode = store.Approximate
				require.NoError(t, in.g.SetRules([]core.Rule{r}))
			}
			admitted := 0
			for range limit {
				if enter() == nil {
					admitted++
				}
			}
			assert.LessOrEqual(t, admitted, localLimit, "admitted by one instance that never read the others' counts")
			if how == "started" {
				ap := in.g.Stores()[0].Modes
				require.Len(t, ap, 1)
				assert.Positive(t, ap[0].Fallbacks)
			}
		})
	}
}
