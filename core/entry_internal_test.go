package core

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core/clock"
)

// TestEnterReadsCoarseClockUnlessRulesWait: a Guard on the system clock
// makes decisions on its coarse clock, except for resources with a rule
// that makes requests wait (leaky bucket), whose Enter and Exit read the
// Guard's clock. The Guard's clock is swapped for a fake one far from the
// system clock's reading, so the two are told apart.
func TestEnterReadsCoarseClockUnlessRulesWait(t *testing.T) {
	g, err := New(WithRules(
		Rule{Name: "paced", Resource: "paced", Kind: KindFlow, Algorithm: "leaky-bucket", Limit: 1000, MaxWait: time.Second},
		Rule{Name: "windowed", Resource: "*", Kind: KindFlow, Limit: 1000},
	))
	require.NoError(t, err)
	defer g.Close()
	require.NotNil(t, g.coarse)
	const far = 1000 * time.Hour
	fc := clock.NewFake(far)
	g.clock = fc
	ctx := context.Background()

	paced, err := g.Enter(ctx, "paced")
	require.NoError(t, err)
	assert.Equal(t, int64(far), paced.start, "a waiting rule applies: the Guard's clock")
	fc.Advance(5 * time.Millisecond)
	paced.Exit(nil)
	st, _ := g.Stats("paced")
	assert.Equal(t, 5*time.Millisecond, st.RT, "Exit reads the clock Enter read")

	other, err := g.Enter(ctx, "other")
	require.NoError(t, err)
	assert.Less(t, other.start, int64(far), "no waiting rule: the coarse clock")
	assert.GreaterOrEqual(t, other.start, int64(0))
	other.Exit(nil)
}

// TestConcurrentEntriesCountInDifferentStripes: requests in flight together
// count in different statistics stripes, as many as there are, so that
// goroutines entering together do not write the same cache lines; and the
// stats merge the stripes.
func TestConcurrentEntriesCountInDifferentStripes(t *testing.T) {
	g, err := New(WithClock(clock.NewFake(time.Second)))
	require.NoError(t, err)
	ctx := context.Background()
	res, _ := g.resources.get("r")
	entries := make([]Entry, len(res.stripes))
	seen := map[uint8]bool{}
	for i := range entries {
		entries[i], err = g.Enter(ctx, "r")
		require.NoError(t, err)
		seen[entries[i].stripe] = true
	}
	assert.Len(t, seen, len(res.stripes), "one stripe each")
	for i := range entries {
		entries[i].Exit(nil)
	}
	st, _ := g.Stats("r")
	assert.Equal(t, int64(len(entries)), st.Pass)
	assert.Equal(t, int64(len(entries)), st.Complete)
	assert.Equal(t, int64(len(entries)), st.Peak)
	assert.Zero(t, st.InFlight)
}
