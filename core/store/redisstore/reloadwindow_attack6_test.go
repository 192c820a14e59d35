package redisstore_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/store"
	"github.com/sluicekit/sluice/core/store/redisstore"
	"github.com/sluicekit/sluice/core/store/redisstore/internal/redistest"
)

// TestReloadedWindowKeepsWhatWasSpent: a reload that changes a rule's
// window keeps what each client has spent and owes (README, package core:
// "a tightened rule is waited out at its new rate"), as it does in memory
// and with store.NewMemory. With Redis it does not: 10 of 10 per minute
// spent, then the window reloaded to 2 minutes (half the rate), admits 10
// more at once with a sliding counter, exact or approximate (its Redis
// keys name the window), 10 more with an approximate token bucket and 5
// with an exact one (its TAT kept in time, not in requests owed), where
// memory admits none. Likewise a token bucket's limit cut from 10 to 5 a
// minute after 10 requests tells the next to retry after 12s with Redis,
// 1m12s in memory (the 10 owed at the new rate).
func TestReloadedWindowKeepsWhatWasSpent(t *testing.T) {
	t.Skip("bug: a reload changing the window of a rule kept in Redis resets (sliding counter, approximate buckets) or halves (exact buckets) what clients spent, and a cut limit is not waited out; store.NewMemory keeps it")
	srv := redisstore.SharedRedis(t)
	for _, alg := range []core.Algorithm{core.AlgorithmSlidingCounter, core.AlgorithmTokenBucket} {
		for _, mode := range []store.Mode{store.Exact, store.Approximate} {
			name := fmt.Sprint(alg, " ", mode)
			rule := core.Rule{Name: "r", Resource: "GET /x", Kind: core.KindFlow, Algorithm: alg, Limit: 10,
				Window: time.Minute, Store: "redis", Mode: mode}
			in := newInstance(t, srv, redistest.UniquePrefix(), patient, core.WithRules(rule))
			admitted := func() int {
				n := 0
				for range 20 {
					if e, err := in.g.Enter(context.Background(), "GET /x"); err == nil {
						e.Exit(nil)
						n++
					}
				}
				return n
			}
			require.Equal(t, 10, admitted(), name)
			rule.Window = 2 * time.Minute
			require.NoError(t, in.g.SetRules([]core.Rule{rule}))
			assert.Zero(t, admitted(), "%s: 10 spent of 10 per 2 minutes", name)
		}
	}

	rule := core.Rule{Name: "cut", Resource: "GET /y", Kind: core.KindFlow, Algorithm: core.AlgorithmTokenBucket, Limit: 10,
		Window: time.Minute, Store: "redis"}
	in := newInstance(t, srv, redistest.UniquePrefix(), patient, core.WithRules(rule))
	for range 10 {
		e, err := in.g.Enter(context.Background(), "GET /y")
		require.NoError(t, err)
		e.Exit(nil)
	}
	rule.Limit = 5
	require.NoError(t, in.g.SetRules([]core.Rule{rule}))
	_, err := in.g.Enter(context.Background(), "GET /y")
	var b *core.BlockedError
	require.ErrorAs(t, err, &b)
	assert.Greater(t, b.RetryAfter, time.Minute, "10 owed at 5 a minute: a cut rate is waited out")
}
