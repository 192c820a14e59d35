package core_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/clock"
)

// TestStoresSinceIsTheCurrentOutages opens and closes a store's breaker
// thousands of times (a failure opens it, a probe after the backoff closes
// it, each at a later time of the fake clock) while another goroutine reads
// Stores: a store shown unhealthy is so since after the last close the
// reader had seen, never since the previous outage.
//
// Failed before: the breaker opened before it recorded when, so Stores
// could show an outage that had just begun with the previous one's Since
// (and Err).
func TestStoresSinceIsTheCurrentOutages(t *testing.T) {
	s := newScripted(t)
	fc := clock.NewFake(time.Hour)
	const backoff = time.Second
	g := breakerGuard(t, s, fc, core.WithStoreBreaker(1, backoff))
	var closedAt atomic.Int64 // the clock's time of the last close
	var stop atomic.Bool
	var wg sync.WaitGroup
	var bad atomic.Int64
	var seen atomic.Int64
	wg.Go(func() {
		for !stop.Load() {
			c := closedAt.Load()
			m := g.Stores()[0].Modes[0]
			if !m.Healthy {
				seen.Add(1)
				if int64(m.Since) <= c {
					bad.Store(int64(m.Since))
				}
			}
		}
	})
	for range 20000 {
		fc.Advance(time.Millisecond)
		s.fail.Store(true)
		e, err := g.Enter(context.Background(), "x")
		require.NoError(t, err)
		e.Exit(nil)
		s.fail.Store(false)
		fc.Advance(backoff)
		e, err = g.Enter(context.Background(), "x") // the probe closes it
		require.NoError(t, err)
		e.Exit(nil)
		closedAt.Store(int64(fc.Now()))
	}
	stop.Store(true)
	wg.Wait()
	t.Logf("the reader saw %d open breakers", seen.Load())
	require.Zero(t, bad.Load(), "an outage shown since %s, before the last close", time.Duration(bad.Load()))
}
