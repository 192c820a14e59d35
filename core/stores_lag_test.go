package core

import (
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/sluicekit/sluice/core/clock"
	"github.com/sluicekit/sluice/core/store"
)

// TestStoreLatencyBudgetHostLag times rounds of calls of 45ms against the
// default budget of 20ms, on a host whose short sleeps (storeHealth.nap)
// oversleep by late(i, j), for the j-th nap of the i-th look at the store.
// The 12th round is the first look: 12 rounds in 16 over twice the budget,
// by 5ms, the lag that would explain them. A healthy store on a busy host
// (naps from 30ms to 370ms late, some on time, in
// TestGuardSlowRepliesUnderLoad with the CPUs saturated) keeps its breaker
// closed; a slow one on an idle host, or on a host late by less than the
// rounds' excess, opens it: at once, or once the lag seen is a second old.
// Before the fix (one nap a look, no memory), the breakers of the host on
// time for 2ms and of the host late once opened at the 12th and 13th round.
func TestStoreLatencyBudgetHostLag(t *testing.T) {
	const budget, took = int64(20 * time.Millisecond), 45 * time.Millisecond
	const late = 300 * time.Millisecond
	for _, tc := range []struct {
		name   string
		late   func(i, j int) time.Duration
		opened int // the round that opened the breaker, 0 for none
		naps   int // of the first look
	}{
		{"busy host, late at once", func(int, int) time.Duration { return late }, 0, 1},
		{"busy host, on time for 2ms", func(_, j int) time.Duration {
			if j < 20 {
				return 0
			}
			return late
		}, 0, 21},
		{"idle host", func(int, int) time.Duration { return 0 }, 12, 50}, // 5ms of naps
		{"host late by 4ms", func(int, int) time.Duration { return 4 * time.Millisecond }, 12, 2},
		{"host late once", func(i, _ int) time.Duration {
			if i == 0 {
				return late
			}
			return 0
		}, 35, 1}, // 1s after the 12th round (45ms each)
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := clock.NewFake(time.Hour)
			rp := newReporter(func() time.Duration { return c.Now() }, slog.New(slog.DiscardHandler), nil)
			t.Cleanup(rp.stop)
			looks, naps, j := 0, 0, 0
			nap := func() int64 {
				naps, j = naps+1, j+1
				return int64(tc.late(looks, j-1))
			}
			b := &storeHealth{store: "redis", mode: store.Exact, backoff: int64(time.Hour), trip: 5, budget: budget, clock: c, nap: nap, reporter: rp}
			b.openUntil.Store(healthy)
			opened := 0
			for i := 1; i <= 3*timedRounds && opened == 0; i++ {
				round, ok := b.allow(int64(c.Now()))
				assert.True(t, ok)
				start := int64(c.Now())
				c.Advance(took)
				j = 0
				b.succeeded(start, round)
				if j > 0 {
					looks++
				}
				if b.openUntil.Load() != healthy {
					opened = i
				}
				if i == 3*timedRounds/4 {
					assert.Equal(t, tc.naps, naps, "naps of the first look")
				}
			}
			assert.Equal(t, tc.opened, opened, "round that opened the breaker")
		})
	}
}
