package core

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core/clock"
	"github.com/sluicekit/sluice/core/internal/history"
)

// lastSample returns the second of the recorder's last sample, reading
// without sampling.
func lastSample(h *history.Recorder) int64 {
	end, _, _ := h.Read(0)
	return int64(end / time.Second)
}

// waitSample waits, without calling History, until h has sampled second
// sec.
func waitSample(t *testing.T, h *history.Recorder, sec int64) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if lastSample(h) >= sec {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the recorder did not sample second %d within 30s (last %d)", sec, lastSample(h))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestHistoryGoroutineSamplesTheGuardsClock checks that the goroutine the
// first History starts samples each second of a fake clock by itself, and
// that Close stops it: History after Close starts none.
func TestHistoryGoroutineSamplesTheGuardsClock(t *testing.T) {
	fc := clock.NewFake(10 * time.Second)
	g, err := New(WithClock(fc), WithRules(Rule{Name: "r", Resource: "a", Kind: KindFlow, Limit: 1}))
	require.NoError(t, err)
	h := g.history
	end, series, rules := h.Read(0)
	require.Zero(t, end, "nothing recorded before History")
	require.Empty(t, series)
	require.Empty(t, rules)
	g.History(0)
	require.Equal(t, int64(10), lastSample(h))
	for range 3 {
		_, _ = g.Enter(context.Background(), "a")
	}
	fc.Advance(time.Second)
	waitSample(t, h, 11)
	res := g.History(0).Resources
	require.Len(t, res, 1)
	assert.Equal(t, []float64{1}, res[0].Pass)
	assert.Equal(t, []float64{2}, res[0].Block)
	expired, cancelExpired := context.WithCancel(context.Background())
	cancelExpired()
	assert.Error(t, fc.WaitForSleepers(expired, 1), "the goroutine sleeps on timers, not on the Guard's clock")

	require.NoError(t, g.Close())
	assert.False(t, h.Start(), "closed")
	h.Wait() // returns: stopped
	fc.Advance(time.Second)
	g.History(0)
	h.Wait()
	assert.Equal(t, int64(12), lastSample(h), "History after Close samples itself")
}

// TestHistoryOnTheSystemClock checks the goroutine on the system clock.
func TestHistoryOnTheSystemClock(t *testing.T) {
	g, err := New()
	require.NoError(t, err)
	t.Cleanup(func() { _ = g.Close() })
	g.History(0)
	waitSample(t, g.history, lastSample(g.history)+1)
}

// TestHistoryGoroutineStopsWhenTheGuardIsCollected drops a Guard that
// records its history without Close: its goroutine ends.
func TestHistoryGoroutineStopsWhenTheGuardIsCollected(t *testing.T) {
	fc := clock.NewFake(0)
	g, err := New(WithClock(fc))
	require.NoError(t, err)
	g.History(0)
	h := g.history
	g = nil
	done := make(chan struct{})
	go func() { h.Wait(); close(done) }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		runtime.GC()
		select {
		case <-done:
			return
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("the history goroutine of a collected Guard still runs after 30s")
		}
	}
}
