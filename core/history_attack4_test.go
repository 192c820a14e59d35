package core_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHistoryAcrossClockJumps drives a Guard's history through a fake
// clock stepped forwards by hours and by 100 years, and backwards twice as far:
// no panic, never more than 600 points a series, no count lost or counted
// twice (the counts of the seconds skipped are shared evenly between them,
// of which the last 600 are kept), and the history, frozen while the clock
// is behind the last second recorded, takes up again with what was counted
// meanwhile.
func TestHistoryAcrossClockJumps(t *testing.T) {
	g, fc := quietGuard(t)
	t.Cleanup(func() { _ = g.Close() })
	pass := func(n int) {
		for range n {
			e, err := g.Enter(context.Background(), "GET /a")
			require.NoError(t, err)
			e.Exit(nil)
		}
	}
	// sum returns the passes of GET /a in the points after after, and the
	// history's end.
	sum := func(after time.Duration) (float64, time.Duration) {
		h := g.History(after)
		s := 0.0
		for _, r := range h.Resources {
			assert.LessOrEqual(t, len(r.Pass), historySeconds, "%s", r.Resource)
			for _, v := range r.Pass {
				if !math.IsNaN(v) {
					s += v
				}
			}
		}
		for _, r := range h.Rules {
			assert.LessOrEqual(t, len(r.Evaluated), historySeconds, "%s", r.Rule)
		}
		return s, h.End
	}
	g.History(0) // records from 10s
	pass(5)
	fc.Advance(time.Second)
	s, end := sum(0)
	assert.Equal(t, 11*time.Second, end)
	assert.InDelta(t, 5, s, 1e-3)

	pass(7)
	fc.Advance(5 * time.Hour)
	s, end = sum(11 * time.Second)
	assert.Equal(t, 11*time.Second+5*time.Hour, end)
	assert.InDelta(t, 7.0*historySeconds/(5*3600), s, 1e-3, "shared by the 18,000 seconds, of which 600 are kept")

	fc.Advance(-5 * time.Hour)
	pass(11)
	s, frozen := sum(end)
	assert.Equal(t, end, frozen, "behind the last second recorded: nothing new")
	assert.Zero(t, s)
	fc.Advance(5*time.Hour + 2*time.Second)
	s, end = sum(frozen)
	assert.Equal(t, frozen+2*time.Second, end)
	assert.InDelta(t, 11, s, 1e-3, "what was counted while the clock was behind")

	const years = 100 * 365 * 24 * time.Hour
	pass(3)
	fc.Advance(years)
	s, end = sum(frozen)
	assert.Equal(t, frozen+2*time.Second+years, end)
	assert.InDelta(t, 3.0*historySeconds/years.Seconds(), s, 1e-9)
	fc.Advance(-2 * years)
	pass(2)
	_, back := sum(0)
	assert.Equal(t, end, back)
	fc.Advance(2*years + time.Second)
	s, _ = sum(end)
	assert.InDelta(t, 2, s, 1e-3)
}
