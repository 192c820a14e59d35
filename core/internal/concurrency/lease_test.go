package concurrency

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core/stripe"
)

// TestSmallLimitKeepsNoSlots: below MinLeasedLimit no CPU keeps free
// slots: every slot released is free for every CPU at once.
func TestSmallLimitKeepsNoSlots(t *testing.T) {
	l := New(3, nil)
	for cpu := range uint32(3) {
		require.True(t, l.AcquireOn(cpu, 1))
	}
	assert.False(t, l.AcquireOn(0, 1), "full")
	l.ReleaseOn(1, 1)
	assert.True(t, l.AcquireOn(2, 1), "a slot released on CPU 1 is free on CPU 2")
	assert.Equal(t, int64(3), l.s.taken.Load(), "no free slot kept")
}

// TestLeasedSlots: with a large limit, a CPU takes a lease of free slots
// with its first request and serves the next ones from it without
// touching the shared count; released slots go back to the lease.
func TestLeasedSlots(t *testing.T) {
	lim := 2 * MinLeasedLimit()
	l := New(lim, nil)
	chunk := stripe.LeaseSize(lim-1, len(l.s.leases))
	require.Positive(t, chunk)
	require.True(t, l.AcquireOn(0, 1))
	assert.Equal(t, 1+chunk, l.s.taken.Load(), "one slot and a lease")
	assert.Equal(t, int64(1), l.InFlight())
	for range chunk {
		require.True(t, l.AcquireOn(0, 1))
	}
	assert.Equal(t, 1+chunk, l.s.taken.Load(), "served from the lease")
	assert.Equal(t, 1+chunk, l.InFlight())
	l.ReleaseOn(0, 2)
	assert.Equal(t, 1+chunk, l.s.taken.Load(), "released into the lease")
	assert.Equal(t, chunk-1, l.InFlight())
	// A CPU keeps at most maxLease: more released goes back.
	l.ReleaseOn(0, chunk-1)
	assert.LessOrEqual(t, l.s.leases[0].free.Load(), int64(maxLease))
	assert.Zero(t, l.InFlight())
}

// TestLeasedSlotsDrainToTheLimit: CPUs taking turns until each is refused
// hold exactly the limit: no slot stays free in a lease.
func TestLeasedSlotsDrainToTheLimit(t *testing.T) {
	lim := 2*MinLeasedLimit() + 7
	l := New(lim, nil)
	cpus := uint32(3 * len(l.s.leases))
	var held int64
	for open := true; open; {
		open = false
		for cpu := range cpus {
			if l.AcquireOn(cpu, 1) {
				held++
				open = true
			}
		}
	}
	assert.Equal(t, lim, held)
	assert.Equal(t, lim, l.InFlight())
}

// TestReloadGivesFreeSlotsBack: the Limiter of a reloaded rule shares the
// count, and the slots CPUs kept free go back to it, so a lowered limit
// holds at once.
func TestReloadGivesFreeSlotsBack(t *testing.T) {
	prev := New(2*MinLeasedLimit(), nil)
	for cpu := range uint32(len(prev.s.leases)) {
		require.True(t, prev.AcquireOn(cpu, 1))
	}
	next := New(int64(len(prev.s.leases)), prev)
	assert.Equal(t, int64(len(prev.s.leases)), next.s.taken.Load(), "only the slots in flight")
	assert.False(t, next.AcquireOn(0, 1), "the lowered limit holds")
}

// TestLoweredLimitHoldsWhileOldRequestsExit: after a reload lowers the
// limit below the requests in flight, the slots those requests release
// under the old Limiter go back to the shared count, not to a CPU's lease
// a new request could take them from: no request is admitted until fewer
// than the new limit are in flight.
func TestLoweredLimitHoldsWhileOldRequestsExit(t *testing.T) {
	big := 4 * MinLeasedLimit()
	prev := New(big, nil)
	const held = 1000
	for i := range held {
		require.True(t, prev.AcquireOn(uint32(i), 1))
	}
	const lower = 500
	next := New(lower, prev)
	for i := range held - lower {
		prev.ReleaseOn(0, 1) // an old request exits on CPU 0
		require.False(t, next.AcquireOn(0, 1), "admitted with %d in flight, limit %d", held-i-1, lower)
	}
	prev.ReleaseOn(0, 1)
	assert.True(t, next.AcquireOn(0, 1), "fewer than the limit in flight")
}

// TestConcurrentLeasedSlots: 64 goroutines on more CPU indexes than there
// are leases together try to hold more slots than a limit large enough for
// leases, then release and take slots by turns: the slots held never
// exceed the limit, fall short of it by at most the free slots CPUs may
// keep, and at the end none is in flight.
func TestConcurrentLeasedSlots(t *testing.T) {
	lim := MinLeasedLimit() + 100
	l := New(lim, nil)
	const goroutines = 64
	want := int(lim/goroutines) + 50 // each: together more than the limit
	var holding, peak atomic.Int64
	take := func(cpu uint32) bool {
		if !l.AcquireOn(cpu, 1) {
			return false
		}
		h := holding.Add(1)
		for p := peak.Load(); h > p && !peak.CompareAndSwap(p, h); p = peak.Load() {
		}
		return true
	}
	var filled, wg sync.WaitGroup
	filled.Add(goroutines)
	full := make(chan struct{})
	for g := range goroutines {
		wg.Go(func() {
			cpu := uint32(g)
			held := 0
			for range 2 * want {
				if held < want && take(cpu) {
					held++
				}
			}
			filled.Done()
			<-full
			for i := range 1000 {
				if i%2 == 0 && held > 0 {
					holding.Add(-1)
					l.ReleaseOn(cpu+uint32(i), 1)
					held--
				} else if take(cpu) {
					held++
				}
			}
			for range held {
				holding.Add(-1)
				l.ReleaseOn(cpu, 1)
			}
		})
	}
	filled.Wait()
	atFull := holding.Load()
	close(full)
	wg.Wait()
	assert.LessOrEqual(t, peak.Load(), lim)
	assert.GreaterOrEqual(t, atFull, lim-int64(maxLease*len(l.s.leases)), "all but the free slots CPUs keep are held")
	assert.Zero(t, l.InFlight())
	assert.Zero(t, holding.Load())
}
