package concurrency_test

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core/internal/concurrency"
)

func TestAcquireRelease(t *testing.T) {
	l := concurrency.New(3, nil)
	assert.Equal(t, int64(3), l.Limit())
	steps := []struct {
		acquire      int64 // 0: release
		release      int64
		wantOK       bool
		wantInFlight int64 // InFlight after the step
	}{
		{acquire: 1, wantOK: true, wantInFlight: 1},
		{acquire: 2, wantOK: true, wantInFlight: 3},
		{acquire: 1, wantOK: false, wantInFlight: 3}, // full: rejected, not counted
		{release: 1, wantInFlight: 2},
		{acquire: 2, wantOK: false, wantInFlight: 2}, // 2 do not fit beside 2
		{acquire: 1, wantOK: true, wantInFlight: 3},
		{release: 3, wantInFlight: 0},
		{acquire: 4, wantOK: false, wantInFlight: 0}, // more than the limit
		{acquire: 3, wantOK: true, wantInFlight: 3},
	}
	for i, st := range steps {
		if st.acquire > 0 {
			assert.Equal(t, st.wantOK, l.AcquireOn(0, st.acquire), "step %d", i)
		} else {
			l.ReleaseOn(0, st.release)
		}
		assert.Equal(t, st.wantInFlight, l.InFlight(), "step %d", i)
	}
}

func TestZeroLimit(t *testing.T) {
	l := concurrency.New(0, nil)
	assert.False(t, l.AcquireOn(0, 1))
	assert.Zero(t, l.InFlight())
}

// TestReloadSharesInFlight: requests admitted before a reload are released
// against the new limiter, and count against its limit meanwhile.
func TestReloadSharesInFlight(t *testing.T) {
	old := concurrency.New(5, nil)
	require.True(t, old.AcquireOn(0, 4))

	lower := concurrency.New(3, old)
	assert.Equal(t, int64(4), lower.InFlight())
	assert.False(t, lower.AcquireOn(0, 1), "4 in flight already exceed the new limit of 3")
	old.ReleaseOn(0, 2) // the old requests finish
	assert.Equal(t, int64(2), lower.InFlight())
	assert.True(t, lower.AcquireOn(0, 1))

	fresh := concurrency.New(3, nil)
	assert.Zero(t, fresh.InFlight(), "without prev: a new count")
}

// TestConcurrent: 64 goroutines acquiring and releasing as fast as they can
// never see more than the limit in flight, counted by themselves between
// AcquireOn and ReleaseOn, and leave nothing in flight.
func TestConcurrent(t *testing.T) {
	const (
		limit      = 10
		goroutines = 64
		rounds     = 2000
	)
	l := concurrency.New(limit, nil)
	var inside, peak, admitted atomic.Int64
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			cpu := uint32(g)
			for i := range rounds {
				n := int64(1 + i%2) // some take 2 slots
				if !l.AcquireOn(cpu, n) {
					continue
				}
				admitted.Add(1)
				v := inside.Add(n)
				for p := peak.Load(); v > p && !peak.CompareAndSwap(p, v); p = peak.Load() {
				}
				runtime.Gosched() // hold the slots while others try: keep it full
				inside.Add(-n)
				l.ReleaseOn(cpu, n)
			}
		})
	}
	wg.Wait()
	assert.LessOrEqual(t, peak.Load(), int64(limit), "in flight observed by the holders")
	assert.Positive(t, admitted.Load())
	assert.Zero(t, l.InFlight())
	assert.Zero(t, inside.Load())
}
