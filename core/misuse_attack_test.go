package core_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/clock"
)

// TestMisuseIsRefusedNotPanicked: a nil Option, a nil context and a nil
// function are refused with an error, at any load, and a Guard closed
// while requests are decided goes on deciding. Before the fix, New(nil)
// panicked, as did Do with a nil function (after counting a failure), and
// Enter with a nil context passed until a leaky bucket made a request wait
// (or a rule read its priority), then panicked with the slot taken: a
// program that worked at low load crashed under load.
func TestMisuseIsRefusedNotPanicked(t *testing.T) {
	_, err := core.New(core.WithMaxResources(10), nil)
	require.EqualError(t, err, "sluice: New: option 1 is nil")

	c := clock.NewFake(time.Hour)
	g, err := core.New(core.WithClock(c), core.WithRules(
		core.Rule{Name: "f", Resource: "GET /f", Kind: core.KindFlow, Limit: 1 << 20},
		core.Rule{Name: "l", Resource: "GET /l", Kind: core.KindFlow, Limit: 1, Algorithm: core.AlgorithmLeakyBucket, MaxWait: time.Second}))
	require.NoError(t, err)
	for i := range 2 { // the second must wait for its turn
		//lint:ignore SA1012 the misuse under test
		_, err = g.Enter(nil, "GET /l")
		require.EqualError(t, err, `sluice: Enter "GET /l": ctx is nil`, "request %d", i)
	}
	require.EqualError(t, g.Do(context.Background(), "GET /f", nil), "sluice: Do: fn is nil")
	st, _ := g.Stats("GET /f")
	assert.Zero(t, st.Pass+st.Error, "no request counted")

	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			for range 1000 {
				e, err := g.Enter(context.Background(), "GET /f")
				assert.NoError(t, err)
				e.Exit(nil)
			}
		})
	}
	require.NoError(t, g.Close())
	wg.Wait()
	require.NoError(t, g.Close())
	e, err := g.Enter(context.Background(), "GET /f")
	require.NoError(t, err, "a Guard stays usable after Close")
	e.Exit(nil)
}
