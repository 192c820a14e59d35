package flow_test

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluicekit/sluice/core/internal/flow"
	"github.com/sluicekit/sluice/core/internal/sysclock"
)

// benchLimiter measures Acquire on a Limiter of cfg with readings of the
// system clock, so bucket rotation, refills and window rolls happen as they
// do in production, serially and from parallel goroutines. It reports the
// share of requests admitted (admitted/op), which must be 1 on a pass path
// and near 0 on a blocked one.
func benchLimiter(b *testing.B, cfg flow.Config) {
	run := func(b *testing.B, loop func(l flow.Limiter, now func() int64) (ok, all int64)) {
		l, err := flow.New(cfg, nil)
		if err != nil {
			b.Fatal(err)
		}
		clk := sysclock.New()
		now := func() int64 { return int64(clk.Now()) }
		b.ReportAllocs()
		b.ResetTimer()
		ok, all := loop(l, now)
		b.ReportMetric(float64(ok)/float64(all), "admitted/op")
	}
	b.Run("serial", func(b *testing.B) {
		run(b, func(l flow.Limiter, now func() int64) (ok, all int64) {
			for b.Loop() {
				if l.Acquire(now(), 1).OK {
					ok++
				}
				all++
			}
			return ok, all
		})
	})
	b.Run("parallel", func(b *testing.B) {
		run(b, func(l flow.Limiter, now func() int64) (ok, all int64) {
			var okAll, allAll atomic.Int64
			b.RunParallel(func(pb *testing.PB) {
				var ok, all int64 // per goroutine: no shared counter in the loop
				for pb.Next() {
					if l.Acquire(now(), 1).OK {
						ok++
					}
					all++
				}
				okAll.Add(ok)
				allAll.Add(all)
			})
			return okAll.Load(), allAll.Load()
		})
	})
}

// huge is a limit no benchmark reaches.
const huge = 1 << 40

func BenchmarkLeapArray(b *testing.B) {
	benchLimiter(b, flow.Config{Algorithm: flow.LeapArray, Limit: huge, Window: time.Second, Buckets: 10})
}

// BenchmarkLeapArrayBlocked: a limit of 1 per second, so nearly every
// request is rejected and computes its retry-after.
func BenchmarkLeapArrayBlocked(b *testing.B) {
	benchLimiter(b, flow.Config{Algorithm: flow.LeapArray, Limit: 1, Window: time.Second, Buckets: 10})
}

func BenchmarkFixedWindow(b *testing.B) {
	benchLimiter(b, flow.Config{Algorithm: flow.FixedWindow, Limit: huge})
}

// BenchmarkSlidingLog keeps the largest log allowed; a 10ms window keeps
// the admissions below its limit.
func BenchmarkSlidingLog(b *testing.B) {
	benchLimiter(b, flow.Config{Algorithm: flow.SlidingLog, Limit: flow.MaxSlidingLogLimit, Window: 10 * time.Millisecond})
}

func BenchmarkSlidingCounter(b *testing.B) {
	benchLimiter(b, flow.Config{Algorithm: flow.SlidingCounter, Limit: huge})
}

// BenchmarkTokenBucket: one token per nanosecond, far faster than requests.
func BenchmarkTokenBucket(b *testing.B) {
	benchLimiter(b, flow.Config{Algorithm: flow.TokenBucket, Limit: int64(time.Second), Burst: 1 << 30})
}

// BenchmarkLeakyBucket: slots 1ns apart and a queue of up to 1ms, so requests
// are admitted with at most a few nanoseconds of wait.
func BenchmarkLeakyBucket(b *testing.B) {
	benchLimiter(b, flow.Config{Algorithm: flow.LeakyBucket, Limit: int64(time.Second), MaxWait: time.Millisecond})
}

// BenchmarkTokenBucketFraction: a cost of 1 and a billionth of a
// nanosecond, kept exactly: decisions hold the bucket's mutex.
func BenchmarkTokenBucketFraction(b *testing.B) {
	benchLimiter(b, flow.Config{Algorithm: flow.TokenBucket, Limit: int64(time.Second) - 1, Burst: 1 << 30})
}

// BenchmarkLeakyBucketHole is the hole path of a leaky bucket: two
// requests take the next two slots, the first is given back (Undo), and a
// third takes its slot, the hole, instead of a new one. The clock moves on
// by two slots a round, so every round starts at the TAT.
func BenchmarkLeakyBucketHole(b *testing.B) {
	const slot = int64(time.Microsecond)
	l, err := flow.New(flow.Config{Algorithm: flow.LeakyBucket, Limit: 1_000_000, Window: time.Second, MaxWait: time.Millisecond}, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	now := int64(time.Hour)
	for b.Loop() {
		first := l.Acquire(now, 1)
		second := l.Acquire(now, 1)
		l.Undo(first, 1)
		hole := l.Acquire(now, 1)
		if !first.OK || !second.OK || !hole.OK || hole.Mark() != first.Mark() {
			b.Fatalf("at %d: %+v, %+v, then %+v: want the first's slot again", now, first, second, hole)
		}
		now += 2 * slot
	}
}
