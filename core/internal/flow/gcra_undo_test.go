package flow

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// undoRace runs goroutines that each Acquire one request at a time on the
// bucket l at a fixed now, 0, and give back (Undo) some of their admitted
// decisions, racing the others' decisions on the same TAT: most at once
// (the bucket's latest slot, unless another goroutine took a later one
// meanwhile), every 16th one a decision kept since its previous turn (a
// slot behind later ones: a leaky bucket's hole). It returns the requests
// admitted and those given back.
func undoRace(l Limiter) (admitted, undone int64) {
	const goroutines, rounds = 4, 20_000
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range goroutines {
		wg.Go(func() {
			var a, u int64
			var kept Decision
			for i := range rounds {
				d := l.Acquire(0, 1)
				if !d.OK {
					continue
				}
				a++
				switch {
				case i%16 == 0:
					if kept.OK {
						l.Undo(kept, 1)
						u++
					}
					kept = d
				case i%2 == 0:
					l.Undo(d, 1)
					u++
				}
			}
			mu.Lock()
			admitted, undone = admitted+a, undone+u
			mu.Unlock()
		})
	}
	wg.Wait()
	return admitted, undone
}

// TestUndoRacesDecisions: Undo, racing decisions on the same bucket (a
// token bucket's lock-free compare-and-swap, a leaky bucket's slots given
// back as holes while decisions without the lock advance the TAT), loses
// and counts twice no permit: at a fixed now, the TAT advanced by exactly
// the cost of the requests admitted minus those given back, plus, for a
// leaky bucket, the holes still free before it. A plain load and store
// of the TAT in Undo or in a decision loses one of the racing writes.
func TestUndoRacesDecisions(t *testing.T) {
	// One request costs 1ns, in whole nanoseconds: decisions go lock-free;
	// the buckets are large enough never to reject.
	for _, cfg := range []Config{
		{Algorithm: TokenBucket, Limit: 1 << 20, Window: 1 << 20},
		{Algorithm: LeakyBucket, Limit: 1 << 20, Window: 1 << 20, MaxWait: time.Hour},
	} {
		t.Run(string(cfg.Algorithm), func(t *testing.T) {
			for range 5 { // a race lost once in a few runs fails at least one
				l := mustNew(t, cfg, nil)
				g := l.(*gcra)
				require.False(t, g.locked)
				admitted, undone := undoRace(l)
				require.Positive(t, undone)
				checkUndoRace(t, g, admitted, undone)
			}
		})
	}
}

// checkUndoRace checks the TAT of g after undoRace.
func checkUndoRace(t *testing.T, g *gcra, admitted, undone int64) {
	t.Helper()
	g.st.mu.Lock()
	defer g.st.mu.Unlock()
	require.Less(t, len(g.st.holes.List), maxHoles, "no hole was forgotten")
	var free int64
	for _, h := range g.st.holes.List {
		require.Zero(t, h.From.Frac+h.To.Frac)
		free += h.To.NS - h.From.NS
	}
	require.Equal(t, admitted-undone+free, g.st.tat.Load(), "TAT: %d admitted, %d given back, %dns of holes", admitted, undone, free)
	require.Zero(t, g.st.frac)
}
