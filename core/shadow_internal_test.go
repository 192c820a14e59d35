package core

import (
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core/clock"
)

// A shadow rule is logged at the pace of blocks, marked shadow.
func TestShadowRulesAreLoggedOncePerInterval(t *testing.T) {
	fc := clock.NewFake(time.Hour)
	var buf syncBuffer
	g, err := New(WithClock(fc), WithLogger(slog.New(slog.NewTextHandler(&buf, nil))),
		WithRules(Rule{Name: "one", Resource: "r", Kind: KindFlow, Limit: 0, Shadow: true}))
	require.NoError(t, err)
	for range 1000 {
		e, err := g.Enter(t.Context(), "r")
		require.NoError(t, err)
		e.Exit(nil)
	}
	fc.Advance(blockLogInterval)
	e, err := g.Enter(t.Context(), "r")
	require.NoError(t, err)
	e.Exit(nil)
	require.NoError(t, g.Close()) // delivers the queue
	lines := buf.lines()
	require.Len(t, lines, 2, "%q", lines)
	assert.Contains(t, lines[0], `msg="sluice: shadow rule would block requests; they pass" rule=one resource=r shadow=true`)
	assert.Contains(t, lines[1], `msg="sluice: shadow rule would have blocked requests; they passed" rule=one resource=r shadow=true blocked=1000 over=10s`)
}
