package core

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core/clock"
)

// TestWithCountZeroIsAnError: WithCount(0) took one permit silently; a count
// below 1 is an error, and takes nothing.
func TestWithCountZeroIsAnError(t *testing.T) {
	g, err := New(WithClock(clock.NewFake(0)), WithRules(Rule{Resource: "r", Kind: KindFlow, Limit: 1}))
	require.NoError(t, err)
	for _, n := range []int64{0, -1} {
		_, err := g.Enter(context.Background(), "r", WithCount(n))
		require.Error(t, err, "WithCount(%d)", n)
		assert.Contains(t, err.Error(), "count must be >= 1")
	}
	e, err := g.Enter(context.Background(), "r")
	require.NoError(t, err, "the one permit is still there")
	e.Exit(nil)
}
