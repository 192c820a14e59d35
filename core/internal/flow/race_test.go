package flow

import (
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// admission is one admitted request of a concurrency test: the clock reading
// it was made with and its decision.
type admission struct {
	at int64
	d  Decision
}

// hammer runs goroutines that Acquire one request at a time on l until the
// shared fake time passes end. Every reading advances the time by step, so
// time runs as fast as the goroutines ask for it and readings reach the
// limiter slightly out of order, as they do from a real clock. It returns
// the admissions.
func hammer(l Limiter, goroutines int, step, end int64) []admission {
	return hammerWith(goroutines, step, end, func(_ int, at int64) Decision { return l.Acquire(at, 1) })
}

// hammerWith is hammer with acquire deciding each request, given the
// goroutine's number.
func hammerWith(goroutines int, step, end int64, acquire func(g int, at int64) Decision) []admission {
	var clock atomic.Int64
	per := make([][]admission, goroutines)
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for {
				at := clock.Add(step)
				if at > end {
					return
				}
				if d := acquire(g, at); d.OK {
					per[g] = append(per[g], admission{at, d})
				}
			}
		})
	}
	wg.Wait()
	return slices.Concat(per...)
}

const (
	raceGoroutines = 64
	raceLimit      = 50
	raceWindow     = 1_000_000 // 1ms of fake time
	raceWindows    = 40
	raceStep       = 400 // ns of fake time per reading: 2500 readings a window
)

// TestConcurrentLeapArray: every bucket-aligned window holds at most the
// limit, counting each admission in the bucket its count went to.
func TestConcurrentLeapArray(t *testing.T) {
	const buckets = 10
	l := mustNew(t, Config{Algorithm: LeapArray, Limit: raceLimit, Window: raceWindow, Buckets: buckets}, nil)
	adm := hammer(l, raceGoroutines, raceStep, raceWindows*raceWindow)

	checkBucketWindows(t, adm, raceWindow, buckets, raceLimit)
	assertBusy(t, len(adm))
}

// checkBucketWindows checks that every window of buckets buckets, aligned
// to a bucket boundary, holds at most lim of the admissions, each counted
// in the leap array's bucket its count went to; and that no admission is
// counted in a bucket that ended before it was made.
func checkBucketWindows(t *testing.T, adm []admission, win, buckets, lim int64) {
	t.Helper()
	bucketLen := win / buckets
	perBucket := map[int64]int64{}
	var first, last int64 = 1 << 62, 0
	for _, a := range adm {
		start := a.d.mark
		require.Zero(t, start%bucketLen)
		require.Less(t, a.at, start+bucketLen, "admitted at %d, counted in the bucket starting %d", a.at, start)
		perBucket[start]++
		first, last = min(first, start), max(last, start)
	}
	for end := first; end <= last; end += bucketLen {
		var n int64
		for b := end - win + bucketLen; b <= end; b += bucketLen {
			n += perBucket[b]
		}
		if n > lim {
			t.Errorf("window ending with bucket %d admitted %d, limit %d", end, n, lim)
		}
	}
}

// TestConcurrentFixedWindow: every aligned window holds at most the limit.
func TestConcurrentFixedWindow(t *testing.T) {
	l := mustNew(t, Config{Algorithm: FixedWindow, Limit: raceLimit, Window: raceWindow}, nil)
	adm := hammer(l, raceGoroutines, raceStep, raceWindows*raceWindow)
	perWindow := map[int64]int64{}
	for _, a := range adm {
		perWindow[a.d.ref.(*period).start]++
	}
	for start, n := range perWindow {
		assert.LessOrEqual(t, n, int64(raceLimit), "window %d", start)
	}
	assertBusy(t, len(adm))
}

// TestConcurrentTokenBucket: any span of readings [a, b] holds at most the
// capacity plus what refills in b-a: k admissions need k*cost <= b-a + tol.
func TestConcurrentTokenBucket(t *testing.T) {
	const burst = 10
	l := mustNew(t, Config{Algorithm: TokenBucket, Limit: raceLimit, Window: raceWindow, Burst: burst}, nil)
	adm := hammer(l, raceGoroutines, raceStep, raceWindows*raceWindow)

	const cost = raceWindow / raceLimit // ns per token, exact here
	times := make([]int64, len(adm))
	for i, a := range adm {
		times[i] = a.at
	}
	checkRefill(t, times, nil, cost, (raceLimit+burst)*cost)
	assertBusy(t, len(adm))
}

// checkRefill checks that any span of readings [a, b] among times (of
// admissions of n[i] requests each, or one when n is nil) holds at most
// what a token bucket of tol, its capacity as time, lets through when a
// request costs cost: k requests need k*cost <= b-a + tol.
func checkRefill(t *testing.T, times, n []int64, cost, tol int64) {
	t.Helper()
	idx := make([]int, len(times))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(i, j int) int { return int(times[i] - times[j]) })
	// With k(j) the requests admitted up to j in time order, and
	// g(j) = k(j)*cost - times[j], admissions i..j fit when
	// (k(j)-k(i-1))*cost <= times[j]-times[i] + tol, that is
	// g(j) - tol <= k(i-1)*cost - times[i]: check against the smallest
	// right-hand side before j.
	minH := int64(1 << 62)
	var k int64
	for _, i := range idx {
		minH = min(minH, k*cost-times[i])
		if n == nil {
			k++
		} else {
			k += n[i]
		}
		if k*cost-times[i]-tol > minH {
			t.Fatalf("admissions up to %d at %d exceed the capacity plus refill", k, times[i])
		}
	}
}

// assertBusy checks that a concurrency test admitted a good share of its
// limit, so that the bounds it checks were under pressure.
func assertBusy(t *testing.T, admitted int) {
	t.Helper()
	assert.GreaterOrEqual(t, admitted, raceLimit*raceWindows/2, "admitted in all")
}

// TestConcurrentLeakyBucketUndo: goroutines take leaky-bucket slots of one
// or two requests and give half of them back a step later, while time
// runs; the slots kept never overlap (each request proceeds at least its
// predecessor's cost after it), whether a slot came from the TAT by
// compare-and-swap or from a hole under the lock, whole or split, with a
// whole-nanosecond cost and with a fractional one.
func TestConcurrentLeakyBucketUndo(t *testing.T) {
	const step = raceStep / 8
	nOf := func(at int64) int64 { return 1 + at/step%2 }
	for _, lim := range []int64{raceLimit, 3 * raceLimit} { // cost 20000ns, 6666⅔ns
		t.Run("", func(t *testing.T) {
			l := mustNew(t, Config{Algorithm: LeakyBucket, Limit: lim, Window: raceWindow, MaxWait: raceWindows * raceWindow}, nil)
			// Each goroutine gives back every other slot it takes one
			// step later, when others have taken slots after it: holes.
			type taken struct {
				d Decision
				n int64
			}
			pending := make([]taken, raceGoroutines)
			var undone atomic.Int64
			adm := hammerWith(raceGoroutines, step, raceWindows*raceWindow/4, func(g int, at int64) Decision {
				d := l.Acquire(at, nOf(at))
				if p := pending[g]; p.d.OK {
					l.Undo(p.d, p.n)
					undone.Add(1)
					pending[g] = taken{}
				} else if d.OK {
					pending[g] = taken{d, nOf(at)}
					return Decision{} // not kept: given back next step
				}
				return d
			})
			for _, p := range pending {
				l.Undo(p.d, p.n)
			}
			require.Positive(t, undone.Load())
			type slot struct{ start, n int64 }
			slots := make([]slot, len(adm))
			for i, a := range adm {
				slots[i] = slot{a.at + int64(a.d.Wait), nOf(a.at)} // starts rounded up
			}
			slices.SortFunc(slots, func(a, b slot) int { return int(a.start - b.start) })
			for i := 1; i < len(slots); i++ {
				// Starts are rounded up: with a fractional cost, a
				// nanosecond less than the cost may part two.
				prev := slots[i-1]
				require.GreaterOrEqual(t, slots[i].start-prev.start, prev.n*raceWindow/lim-1, "slots %d and %d", i-1, i)
			}
			assert.Greater(t, len(adm), int(raceWindows/4*lim/4), "admitted in all")
		})
	}
}
