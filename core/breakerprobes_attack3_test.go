package core_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/breaker"
	"github.com/sluicekit/sluice/core/clock"
)

// TestBreakerProbesUnderConcurrency: when a tripped breaker goes
// half-open, 64 goroutines arriving at once get exactly its Probes places,
// and a probe another rule rejects gives its place back rather than
// leaving the breaker half-open with no probe out. Once every probe
// succeeds it closes.
func TestBreakerProbesUnderConcurrency(t *testing.T) {
	const probes = 3
	b := core.Rule{Name: "b", Resource: "r", Kind: core.KindBreaker, Strategy: "error-count", Threshold: 1,
		MinRequests: 1, OpenFor: 5 * time.Second, Probes: probes}
	tripped := func(rules ...core.Rule) *core.Guard {
		fc := clock.NewFake(time.Hour)
		g, err := core.New(core.WithClock(fc), core.WithRules(rules...))
		require.NoError(t, err)
		t.Cleanup(func() { _ = g.Close() })
		require.NoError(t, call(g, fc, "r", 0, errFailed))
		require.Error(t, call(g, fc, "r", 0, nil), "the breaker tripped")
		fc.Advance(5 * time.Second)
		return g
	}
	assert.Len(t, enterAll(t, tripped(b), 64), probes, "the breaker alone")

	g := tripped(b, core.Rule{Name: "c", Resource: "r", Kind: core.KindConcurrency, Limit: probes - 1})

	// Round one: the concurrency rule admits 2 of the 3 probes; the
	// third, rejected by it, gives its breaker place back.
	admitted := enterAll(t, g, 64)
	require.Len(t, admitted, probes-1)
	assert.Equal(t, breaker.HalfOpen, breakerState(t, g))
	// Round two: one of those succeeds and frees a slot; the third probe
	// place is still free, and exactly one more request gets it.
	admitted[0].Exit(nil)
	more := enterAll(t, g, 64)
	require.Len(t, more, 1)
	assert.Equal(t, breaker.HalfOpen, breakerState(t, g), "2 of 3 probes out")
	admitted[1].Exit(nil)
	more[0].Exit(nil)
	assert.Equal(t, breaker.Closed, breakerState(t, g), "3 of 3 probes succeeded")
	assert.Len(t, enterAll(t, g, probes-1), probes-1, "closed: the concurrency rule alone limits")
}

// enterAll enters r from n goroutines at once and returns the entries
// admitted, still held.
func enterAll(t *testing.T, g *core.Guard, n int) []core.Entry {
	t.Helper()
	var (
		mu  sync.Mutex
		got []core.Entry
		wg  sync.WaitGroup
	)
	start := make(chan struct{})
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			if e, err := g.Enter(context.Background(), "r"); err == nil {
				mu.Lock()
				got = append(got, e)
				mu.Unlock()
			}
		}()
	}
	close(start)
	wg.Wait()
	return got
}

func breakerState(t *testing.T, g *core.Guard) breaker.State {
	t.Helper()
	for _, r := range g.Snapshot().Rules {
		if r.Breaker != nil {
			return r.Breaker.State
		}
	}
	t.Fatal("no breaker rule")
	return ""
}
