package core

import (
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core/clock"
	"github.com/sluicekit/sluice/core/store"
)

// playedLag returns a lagWatch on c whose naps the test plays (saw, due):
// they run from from on; no goroutine naps.
func playedLag(c clock.Clock, from time.Duration) *lagWatch {
	w := &lagWatch{clock: c}
	w.running.Store(true)
	w.from.Store(int64(from))
	return w
}

// TestStoreLatencyBudgetHostLag times rounds of calls of 45ms against the
// default budget of 20ms (over it by 25ms, need), while the Guard's naps
// oversleep by late(i) in the i-th round (from 1), from the end of the
// first round on (the first call over the budget starts them). A healthy
// store on a busy host (naps late by 30ms) keeps its breaker closed, also
// when the lateness is only seen in a nap still in progress; a slow one on
// an idle host, or a host late by less than need, opens it at the 17th
// round: the first whose 16 rounds the naps ran through. A lag seen before
// the 16 rounds' span explains nothing: late in the 2nd round only, it
// opens at the 19th (the lag is kept by slots of 67ms). Before the fix (naps
// by the request, a lag remembered for a second), that host opened it at
// the 35th, and the request that opened it had napped 5ms.
func TestStoreLatencyBudgetHostLag(t *testing.T) {
	const budget, took = int64(20 * time.Millisecond), 45 * time.Millisecond
	const late = 30 * time.Millisecond
	for _, tc := range []struct {
		name    string
		late    func(i int) time.Duration
		pending bool // the lateness is a nap's in progress at the round's end
		opened  int  // the round that opened the breaker, 0 for none
	}{
		{"busy host", func(int) time.Duration { return late }, false, 0},
		{"busy host, nap in progress", func(int) time.Duration { return late }, true, 0},
		{"idle host", func(int) time.Duration { return 0 }, false, 17},
		{"host late by 4ms", func(int) time.Duration { return 4 * time.Millisecond }, false, 17},
		{"host late in the 2nd round", func(i int) time.Duration {
			if i == 2 {
				return late
			}
			return 0
		}, false, 19},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := clock.NewFake(time.Hour)
			rp := newReporter(func() time.Duration { return c.Now() }, slog.New(slog.DiscardHandler), nil)
			t.Cleanup(rp.stop)
			b := &storeHealth{store: "redis", mode: store.Exact, backoff: int64(time.Hour), trip: 5, budget: budget, clock: c,
				lag: playedLag(c, time.Hour+took), reporter: rp}
			b.openUntil.Store(healthy)
			opened := 0
			for i := 1; i <= 3*timedRounds && opened == 0; i++ {
				round, ok := b.allow(int64(c.Now()))
				require.True(t, ok)
				start := int64(c.Now())
				c.Advance(took / 2)
				if !tc.pending {
					b.lag.saw(int64(c.Now()), int64(tc.late(i)))
				}
				c.Advance(took - took/2)
				if tc.pending {
					b.lag.due.Store(int64(c.Now() - tc.late(i)))
				}
				b.succeeded(start, round)
				if b.openUntil.Load() != healthy {
					opened = i
				}
			}
			assert.Equal(t, tc.opened, opened, "round that opened the breaker")
		})
	}
}

// TestStoreLatencyProbeWithoutLag: a probe over the budget whose span the
// naps did not cover (they stop a while after the calls; none run while
// the breaker is open) neither closes the breaker nor keeps it open for a
// backoff: the next request probes, and the probe's call wanted the naps.
// That probe, over the budget by more than the lag, reopens it for the
// backoff; one within the lag closes it.
func TestStoreLatencyProbeWithoutLag(t *testing.T) {
	c := clock.NewFake(time.Hour)
	rp := newReporter(func() time.Duration { return c.Now() }, slog.New(slog.DiscardHandler), nil)
	t.Cleanup(rp.stop)
	const budget, backoff = 20 * time.Millisecond, time.Second
	b := &storeHealth{store: "redis", mode: store.Exact, backoff: int64(backoff), trip: 1, budget: int64(budget), clock: c,
		lag: playedLag(c, 0), reporter: rp}
	b.openUntil.Store(int64(c.Now())) // opened a backoff ago
	probe := func(took, late time.Duration) {
		t.Helper()
		round, ok := b.allow(int64(c.Now()))
		require.True(t, ok)
		require.Equal(t, int64(probing), round)
		start := int64(c.Now())
		c.Advance(took)
		b.lag.saw(int64(c.Now()), int64(late))
		b.succeeded(start, round)
	}
	probe(2*budget, 0)
	assert.Equal(t, int64(c.Now()), b.openUntil.Load(), "no naps during the probe: the next request probes")
	assert.Equal(t, int64(c.Now()+time.Second), b.lag.until.Load(), "the probe wanted the naps")

	b.lag.from.Store(int64(c.Now()))
	probe(2*budget, budget-time.Millisecond)
	assert.Equal(t, int64(c.Now()+backoff), b.openUntil.Load(), "over the budget by more than the lag: open for the backoff")

	c.Advance(backoff)
	probe(2*budget, budget)
	assert.Equal(t, int64(healthy), b.openUntil.Load(), "within the budget net of the lag: closed")
}

// TestStoreLatencyRequestsDoNotNap: requests whose calls look slow do not
// nap to measure the host's lag; the lagWatch's goroutine does, and stop
// (Guard.Close) ends it. Here its first nap lasts until the test ends it:
// 32 rounds of 45ms end all the same, their first call over the budget
// started the goroutine, and the breaker stays closed (the lag of their
// span is not known, or the nap in progress explains it). Before, the
// request whose call looked slow napped on its own goroutine (up to 10ms).
func TestStoreLatencyRequestsDoNotNap(t *testing.T) {
	c := clock.NewFake(time.Hour)
	rp := newReporter(func() time.Duration { return c.Now() }, slog.New(slog.DiscardHandler), nil)
	t.Cleanup(rp.stop)
	napped, wake := make(chan struct{}, 1), make(chan struct{})
	w := &lagWatch{clock: c, sleep: func(time.Duration) {
		select {
		case napped <- struct{}{}:
		default:
		}
		<-wake
	}}
	b := &storeHealth{store: "redis", mode: store.Exact, backoff: int64(time.Hour), trip: 5, budget: int64(20 * time.Millisecond), clock: c, lag: w, reporter: rp}
	b.openUntil.Store(healthy)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 2 * timedRounds {
			round, ok := b.allow(int64(c.Now()))
			assert.True(t, ok)
			start := int64(c.Now())
			c.Advance(45 * time.Millisecond)
			b.succeeded(start, round)
		}
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the requests wait for a nap")
	}
	<-napped
	assert.True(t, w.running.Load(), "the goroutine naps")
	assert.Equal(t, int64(healthy), b.openUntil.Load())
	close(wake)
	w.stop()
	assert.Zero(t, w.from.Load(), "stop ended the naps")
}
