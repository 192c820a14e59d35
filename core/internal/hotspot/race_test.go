package hotspot

import (
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core/internal/flow"
)

// TestConcurrentInFlight: 64 goroutines make requests of 8 values, each
// value allowed 3 in flight (v0 5), through a table of 16 that other values
// churn, so that the 8 are evicted whenever none of their requests is in
// flight (and would be while in flight, were they not pinned). Each
// admitted request is counted in a per-value atomic while it is in flight,
// after Acquire and before Release, so the count never exceeds what the
// Limiter holds; every goroutine records the highest count it saw. Some
// handlers panic, and release in a deferred call as Exit does; some
// requests are given back with Undo. Afterwards every value is back to 0
// and admits its full limit again.
func TestConcurrentInFlight(t *testing.T) {
	const (
		goroutines = 64
		values     = 8
		limit      = 3
		iterations = 2000
	)
	overrides := map[string]int64{"v0": 5}
	l := mustNew(t, Config{Algorithm: Concurrency, Limit: limit, MaxKeys: 16, Overrides: overrides}, nil)
	limitOf := func(v int) int64 {
		if n, ok := overrides["v"+strconv.Itoa(v)]; ok {
			return n
		}
		return limit
	}

	var inFlight [values]atomic.Int64
	highest := make([][values]int64, goroutines) // per goroutine
	var admitted, panics atomic.Int64
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range iterations {
				v := (g + i) % values
				// A handler: Acquire, count in flight, maybe panic, Release
				// in a deferred call.
				func() {
					defer func() {
						if recover() != nil {
							panics.Add(1)
						}
					}()
					d := l.Acquire(0, "v"+strconv.Itoa(v), 1)
					if !d.OK {
						return
					}
					if i%7 == 0 { // another rule rejected the request
						l.Undo(d, 1)
						return
					}
					admitted.Add(1)
					defer l.Release(d.Hold(), 1)
					n := inFlight[v].Add(1)
					highest[g][v] = max(highest[g][v], n)
					defer inFlight[v].Add(-1)
					if i%5 == 0 {
						runtime.Gosched()
					}
					if i%11 == 0 {
						panic("handler failed")
					}
				}()
				if i%3 == 0 {
					// Another value, seen twice: promoted, it pushes the
					// values above out of the protected segment.
					other := "other-" + strconv.Itoa(g) + "-" + strconv.Itoa(i)
					for range 2 {
						d := l.Acquire(0, other, 1)
						l.Release(d.Hold(), 1)
					}
				}
			}
		})
	}
	wg.Wait()
	require.Positive(t, admitted.Load())
	require.Positive(t, panics.Load())

	for v := range values {
		top := int64(0)
		for g := range goroutines {
			top = max(top, highest[g][v])
		}
		assert.LessOrEqual(t, top, limitOf(v), "value %d: in flight above its limit", v)
		assert.Positive(t, top, "value %d: never admitted", v)
		_, n, _ := lookup(l, "v"+strconv.Itoa(v))
		assert.Zero(t, n, "value %d: in flight after every Release", v)
		// Back to 0: the full limit is admitted again, no more.
		var ds []Decision
		for range limitOf(v) {
			d := l.Acquire(0, "v"+strconv.Itoa(v), 1)
			assert.True(t, d.OK, "value %d", v)
			ds = append(ds, d)
		}
		assert.False(t, l.Acquire(0, "v"+strconv.Itoa(v), 1).OK, "value %d", v)
		for _, d := range ds {
			l.Release(d.Hold(), 1)
		}
	}
	checkTable(t, l)
}

// TestConcurrentBuckets: 64 goroutines at one instant take exactly a
// bucket's capacity from each value, however their requests interleave.
func TestConcurrentBuckets(t *testing.T) {
	const goroutines, values, perGoroutine = 64, 4, 50
	l := mustNew(t, Config{Limit: 100, Window: s, Burst: 20}, nil)
	var admitted [values]atomic.Int64
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range perGoroutine {
				v := (g + i) % values
				if l.Acquire(0, "v"+strconv.Itoa(v), 1).OK {
					admitted[v].Add(1)
				}
			}
		})
	}
	wg.Wait()
	for v := range values {
		assert.EqualValues(t, 120, admitted[v].Load(), "value %d", v)
	}
}

// TestConcurrentLeakyGaps: 16 goroutines queue requests of 4 values of one
// shard on leaky buckets and give a third of them back, while the clock
// moves on; the admitted requests of a value that are still held never
// share a slot, and the gaps stay consistent with their records.
func TestConcurrentLeakyGaps(t *testing.T) {
	const goroutines, values, perGoroutine = 16, 4, 300
	l := mustNew(t, Config{Algorithm: LeakyBucket, Limit: 3, Window: time.Millisecond, MaxWait: time.Second, MaxKeys: 8}, nil)
	var clock atomic.Int64
	type slot struct{ from, to flow.Instant }
	var mu sync.Mutex
	held := make([][]slot, values)
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range perGoroutine {
				v := (g + i) % values
				d := l.Acquire(clock.Add(int64(i%3)*1000), "v"+strconv.Itoa(v), 1)
				if !d.OK {
					continue
				}
				if i%3 == 0 {
					l.Undo(d, 1)
					continue
				}
				mu.Lock()
				held[v] = append(held[v], slot{d.Mark().Minus((&flow.GCRA{Limit: 3, Window: time.Millisecond}).Cost(1), 3), d.Mark()})
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	for v, slots := range held {
		slices.SortFunc(slots, func(a, b slot) int {
			if a.from.After(b.from) {
				return 1
			}
			return -1
		})
		for j := 1; j < len(slots); j++ {
			require.False(t, slots[j-1].to.After(slots[j].from), "value %d: slots %+v and %+v overlap", v, slots[j-1], slots[j])
		}
	}
	checkTable(t, l)
}
