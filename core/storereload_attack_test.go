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

// TestStoreBreakerSurvivesReload: a store whose exact calls fail opens its
// exact breaker; a reload (the same rules and one more, as a Watcher
// applies a rewritten file) neither closes it nor makes requests wait for
// the store again, and the store still reports since when and why.
// Removing every exact rule and adding one back does not either.
func TestStoreBreakerSurvivesReload(t *testing.T) {
	fc := clock.NewFake(time.Hour)
	s := newByMode(t, fc)
	g := modesGuard(t, s, fc)
	s.fail(store.Exact)
	for range 10 {
		enter(t, g, "e")
	}
	calls := s.count(store.Exact)
	before := g.Stores()[0].Modes[0]
	require.False(t, before.Healthy)
	rules := g.Rules()
	for _, set := range [][]core.Rule{
		append(rules, core.Rule{Name: "more", Resource: "m", Kind: core.KindFlow, Limit: 1}),
		rules[1:], // the approximate rule alone
		rules,
	} {
		require.NoError(t, g.SetRules(set))
		for range 10 {
			enter(t, g, "e")
			enter(t, g, "a")
		}
		after := g.Stores()[0].Modes[0]
		assert.Equal(t, store.Exact, after.Mode)
		assert.False(t, after.Healthy, "the reload closed the breaker")
		assert.Equal(t, before.Since, after.Since)
		assert.Equal(t, before.Err, after.Err)
	}
	assert.Equal(t, calls, s.count(store.Exact), "no request waited for the failing store")
	assert.True(t, g.Stores()[0].Modes[1].Healthy, "the approximate mode")
}
