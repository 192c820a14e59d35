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

// reloadCase is a rule whose limit is spent, then reloaded as changed by
// change, keeping its name, kind, resource and param: SetRules keeps its
// state ("a reload does not reset a limit", package doc), so at most most
// more requests pass one second later, and at least least (a raised limit
// gives the difference).
type reloadCase struct {
	name        string
	rule        core.Rule
	change      func(*core.Rule)
	least, most int
}

// reloadCases are flow and hotspot rules of 5 per window (hotspot: for
// the value "alice"), spent, then reloaded: unchanged, with another rule
// added, with a larger limit (the difference), or with a longer or shorter
// window or other buckets, table size or algorithm (which only make the
// rule stricter or hold as many: none more).
func reloadCases() []reloadCase {
	flow := func(alg core.Algorithm) core.Rule {
		return core.Rule{Name: "f", Resource: "GET /f", Kind: core.KindFlow, Algorithm: alg, Limit: 5, Window: time.Minute}
	}
	hot := loginRule(1000)
	same := func(*core.Rule) {}
	limit6 := func(r *core.Rule) { r.Limit = 6 }
	window2 := func(r *core.Rule) { r.Window *= 2 }
	halfWindow := func(r *core.Rule) { r.Window /= 2 }
	var cases []reloadCase
	for _, alg := range []core.Algorithm{core.AlgorithmLeapArray, core.AlgorithmSlidingLog, core.AlgorithmSlidingCounter, core.AlgorithmFixedWindow, core.AlgorithmTokenBucket} {
		r := flow(alg)
		cases = append(cases,
			reloadCase{string(alg) + " unchanged", r, same, 0, 0},
			reloadCase{string(alg) + " limit 5 to 6", r, limit6, 1, 1},
			reloadCase{string(alg) + " window 1m to 2m", r, window2, 0, 0},
			reloadCase{string(alg) + " window 1m to 30s", r, halfWindow, 0, 0})
	}
	cases = append(cases,
		reloadCase{"leap-array buckets 10 to 20", flow(core.AlgorithmLeapArray), func(r *core.Rule) { r.Buckets = 20 }, 0, 0},
		reloadCase{"leap-array buckets 10 to 4", flow(core.AlgorithmLeapArray), func(r *core.Rule) { r.Buckets = 4 }, 0, 0},
		reloadCase{"hotspot unchanged", hot, same, 0, 0},
		reloadCase{"hotspot limit 5 to 6", hot, limit6, 1, 1},
		reloadCase{"hotspot maxKeys 1000 to 2000", hot, func(r *core.Rule) { r.MaxKeys = 2000 }, 0, 0},
		reloadCase{"hotspot maxKeys 1000 to 200", hot, func(r *core.Rule) { r.MaxKeys = 200 }, 0, 0},
		reloadCase{"hotspot window 15m to 30m", hot, window2, 0, 0},
		reloadCase{"hotspot window 15m to 7m30s", hot, halfWindow, 0, 0},
		reloadCase{"hotspot token to leaky bucket", hot, func(r *core.Rule) { r.Algorithm = core.AlgorithmLeakyBucket }, 0, 0},
	)
	return cases
}

// TestReloadNeverResetsASpentLimit spends each reload case's limit, adds a
// rule elsewhere, reloads the changed rule and counts what passes a second
// later. The cases of another window, buckets, table size or algorithm
// failed on main (4fe9240): an operator who tightens a rule
// (a longer window, a larger table after a flood) hands every limited
// client a fresh allowance at that moment.
func TestReloadNeverResetsASpentLimit(t *testing.T) {
	ctx := context.Background()
	for _, tc := range reloadCases() {
		t.Run(tc.name, func(t *testing.T) {
			g, fc := newGuard(t, tc.rule)
			enter := func() bool {
				e, err := g.Enter(ctx, tc.rule.Resource, core.WithParams(core.ParamMap{"header:X-User-ID": {"alice"}}))
				e.Exit(nil)
				return err == nil
			}
			spent := 0
			for range 6 {
				if enter() {
					spent++
				}
			}
			require.Equal(t, 5, spent)
			r := tc.rule
			tc.change(&r)
			require.NoError(t, g.SetRules([]core.Rule{r, {Name: "other", Resource: "GET /other", Kind: core.KindFlow, Limit: 1}}))
			fc.Advance(time.Second)
			passed := 0
			for range 6 {
				if enter() {
					passed++
				}
			}
			assert.LessOrEqual(t, passed, tc.most, "passed a second after the reload")
			assert.GreaterOrEqual(t, passed, tc.least, "passed a second after the reload")
		})
	}
}

// TestReloadKeepsLocalFallbackSpent: a store rule's local fallback (its
// store down) is a limiter of its own, carried over the same way: spent,
// then reloaded with a window twice as long, it stays spent a second
// later. Before the fix its token bucket kept its TAT and let one more
// through.
func TestReloadKeepsLocalFallbackSpent(t *testing.T) {
	ctx := context.Background()
	s := newSwitchable(t, clock.NewFake(0))
	fc := clock.NewFake(time.Second)
	rule := core.Rule{Name: "r", Resource: "GET /x", Kind: core.KindFlow, Algorithm: core.AlgorithmTokenBucket, Limit: 100, Window: time.Minute,
		Store: "shared", OnFailure: core.FailLocal, LocalLimit: 2}
	g, err := core.New(core.WithClock(fc), core.WithStore("shared", s), core.WithStoreBreaker(1, time.Hour), core.WithRules(rule))
	require.NoError(t, err)
	defer g.Close()
	s.down.Store(true)
	passed := func() (n int) {
		for range 5 {
			if e, err := g.Enter(ctx, "GET /x"); err == nil {
				n++
				e.Exit(nil)
			}
		}
		return n
	}
	require.Equal(t, 2, passed(), "the local limit")
	rule.Window *= 2
	require.NoError(t, g.SetRules([]core.Rule{rule}))
	fc.Advance(time.Second)
	assert.Zero(t, passed(), "passed locally a second after the reload")
}
