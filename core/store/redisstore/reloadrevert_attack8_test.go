package redisstore_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/clock"
	"github.com/sluicekit/sluice/core/store"
	"github.com/sluicekit/sluice/core/store/redisstore"
	"github.com/sluicekit/sluice/core/store/redisstore/internal/redistest"
)

// TestReloadRevertedKeepsWhatWasSpent: a rule's window is changed, then
// changed back (an operator's rollback), within minutes. What clients spent
// under the changed window stays spent, with Redis as in memory. An exact
// sliding counter of 10 a minute spent 1, was reloaded to 2 minutes
// (carrying the 1) and spent 9 more; reverted to a minute, it read its old
// 1-minute key again, still holding the 1 of before the first reload, and
// admitted 9 more at once where memory admits none.
func TestReloadRevertedKeepsWhatWasSpent(t *testing.T) {
	srv := redisstore.SharedRedis(t)
	for _, alg := range []core.Algorithm{core.AlgorithmSlidingCounter, core.AlgorithmTokenBucket, core.AlgorithmLeakyBucket} {
		for _, mode := range []store.Mode{store.Exact, store.Approximate} {
			t.Run(fmt.Sprint(alg, " ", mode), func(t *testing.T) {
				rule := core.Rule{Name: "r", Resource: "GET /x", Kind: core.KindFlow, Algorithm: alg,
					Limit: 10, Window: time.Minute, Store: "redis", Mode: mode}
				revert(t, srv, rule)
			})
		}
	}
}

func revert(t *testing.T, srv *redistest.Server, rule core.Rule) {
	// run returns what g admits at once after the window's change, and
	// after its revert.
	run := func(t *testing.T, g *core.Guard) (admitted [2]int) {
		burst := func() (n int) {
			for range 20 {
				e, err := g.Enter(context.Background(), rule.Resource)
				if err != nil {
					return n
				}
				e.Exit(nil)
				n++
			}
			return n
		}
		e, err := g.Enter(context.Background(), rule.Resource)
		require.NoError(t, err, "the first")
		e.Exit(nil)
		r := rule
		r.Window = 2 * time.Minute
		require.NoError(t, g.SetRules([]core.Rule{r}))
		admitted[0] = burst()
		require.NoError(t, g.SetRules([]core.Rule{rule}))
		admitted[1] = burst()
		return admitted
	}
	mem, err := store.NewMemory(clock.NewFake(time.Hour), 0)
	require.NoError(t, err)
	mg, err := core.New(core.WithStore("redis", mem), core.WithRules(rule))
	require.NoError(t, err)
	t.Cleanup(func() { _ = mg.Close() })
	want := run(t, mg)
	in := newInstance(t, srv, redistest.UniquePrefix(), patient, core.WithRules(rule))
	assert.Equal(t, want, run(t, in.g), "admitted at once after the change and after the revert, as in memory")
}

// TestReloadSkewSharesOneCount: two instances of a service, one reloaded to
// a window of 2 minutes, the other still on 1 minute (a rolling deploy),
// exact sliding counters of 10. Taking turns, they admit 10 together, not
// 10 each: each carries the count the other wrote last to its own key.
func TestReloadSkewSharesOneCount(t *testing.T) {
	srv := redisstore.SharedRedis(t)
	rule := core.Rule{Name: "r", Resource: "GET /x", Kind: core.KindFlow, Algorithm: core.AlgorithmSlidingCounter,
		Limit: 10, Window: time.Minute, Store: "redis", Mode: store.Exact}
	prefix := redistest.UniquePrefix()
	a := newInstance(t, srv, prefix, patient, core.WithRules(rule))
	b := newInstance(t, srv, prefix, patient, core.WithRules(rule))
	reloaded := rule
	reloaded.Window = 2 * time.Minute
	require.NoError(t, b.g.SetRules([]core.Rule{reloaded}))
	admitted := 0
	for i := range 40 {
		g := a.g
		if i%2 == 1 {
			g = b.g
		}
		if e, err := g.Enter(context.Background(), rule.Resource); err == nil {
			e.Exit(nil)
			admitted++
		}
	}
	assert.Equal(t, 10, admitted, "one count for both windows")
}
