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
		wantInFlight int64 // returned by Acquire, and InFlight after the step
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
			ok, inFlight := l.Acquire(st.acquire)
			assert.Equal(t, st.wantOK, ok, "step %d", i)
			assert.Equal(t, st.wantInFlight, inFlight, "step %d", i)
		} else {
			l.Release(st.release)
		}
		assert.Equal(t, st.wantInFlight, l.InFlight(), "step %d", i)
	}
}

func TestZeroLimit(t *testing.T) {
	l := concurrency.New(0, nil)
	ok, inFlight := l.Acquire(1)
	assert.False(t, ok)
	assert.Zero(t, inFlight)
}

// TestReloadSharesInFlight: requests admitted before a reload are released
// against the new limiter, and count against its limit meanwhile.
func TestReloadSharesInFlight(t *testing.T) {
	old := concurrency.New(5, nil)
	ok, _ := old.Acquire(4)
	require.True(t, ok)

	lower := concurrency.New(3, old)
	assert.Equal(t, int64(4), lower.InFlight())
	ok, _ = lower.Acquire(1)
	assert.False(t, ok, "4 in flight already exceed the new limit of 3")
	old.Release(2) // the old requests finish
	assert.Equal(t, int64(2), lower.InFlight())
	ok, _ = lower.Acquire(1)
	assert.True(t, ok)

	fresh := concurrency.New(3, nil)
	assert.Zero(t, fresh.InFlight(), "without prev: a new count")
}

// TestConcurrent: 64 goroutines acquiring and releasing as fast as they can
// never see more than the limit in flight, counted by themselves between
// Acquire and Release, and leave nothing in flight.
func TestConcurrent(t *testing.T) {
	const (
		limit      = 10
		goroutines = 64
		rounds     = 2000
	)
	l := concurrency.New(limit, nil)
	var inside, peak, admitted atomic.Int64
	var wg sync.WaitGroup
	for range goroutines {
		wg.Go(func() {
			for i := range rounds {
				n := int64(1 + i%2) // some take 2 slots
				if ok, _ := l.Acquire(n); !ok {
					continue
				}
				admitted.Add(1)
				v := inside.Add(n)
				for p := peak.Load(); v > p && !peak.CompareAndSwap(p, v); p = peak.Load() {
				}
				runtime.Gosched() // hold the slots while others try: keep it full
				inside.Add(-n)
				l.Release(n)
			}
		})
	}
	wg.Wait()
	assert.LessOrEqual(t, peak.Load(), int64(limit), "in flight observed by the holders")
	assert.Positive(t, admitted.Load())
	assert.Zero(t, l.InFlight())
	assert.Zero(t, inside.Load())
}
