package hotspot

import (
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

// The figures, in process CPU time per request on a 2-CPU AMD EPYC virtual
// machine with other work running (load average 3-5), medians of 3 runs of
// go test -run '^$' -bench . -benchtime 300ms ./core/internal/hotspot/:
//
//   - 26 cpu-ns on a hot value (BenchmarkHotspotHotKey), of which the lock
//     (two atomic read-modify-writes) takes about 11, the bucket's
//     arithmetic about 5 and the hash about 2 (two hashes: 28);
//   - 35 with 10 000 values taking turns (BenchmarkHotspot10kKeys);
//   - 180-190 with 1 000 000 values in a table of 2 000 000, taking turns
//     in the order they were inserted (BenchmarkHotspot1MKeysHeld), and
//     470 in a random order (BenchmarkHotspot1MKeysHeldRandom). A request
//     waits for its index slot, then its record, from memory (without the
//     lock, an experiment, no faster); records read in arrival order are
//     read in sequence, which the hardware prefetches.
//
// AcquireTo without quota skips the bucket's Remaining and Next: 45.5 ->
// 40 cpu-ns at 10 000 values of a limit of 10^12 an hour.

// huge is a limit no benchmark reaches.
const huge = 1 << 40

// benchAcquire measures Acquire on a fresh Limiter of cfg, serially and
// from parallel goroutines, each request carrying the next of values in
// turn (goroutine g starting at values[g*len(values)/8]). The time is the
// request's number in microseconds, not a clock reading: the Guard reads its
// clock once for all the rules of a request, so the clock is not the
// Limiter's cost (package clock measures it). It reports the share of
// requests admitted (admitted/op), which must be 1 on these pass paths, and
// the process's CPU time per request (cpu-ns/op, every thread's), which a
// machine busy with other work disturbs far less than ns/op.
func benchAcquire(b *testing.B, cfg Config, prefill func(l *Limiter), values []string) {
	const us = int64(time.Microsecond)
	// loop runs requests until more is false, and counts them.
	loop := func(l *Limiter, g int, more func() bool) (ok, all int64) {
		j := g * len(values) / 8 % len(values)
		for more() {
			if l.Acquire(all*us, values[j], 1).OK {
				ok++
			}
			all++
			if j++; j == len(values) {
				j = 0
			}
		}
		return ok, all
	}
	run := func(b *testing.B, measure func(l *Limiter) (ok, all int64)) {
		l := mustNew(b, cfg, nil)
		if prefill != nil {
			prefill(l)
		}
		b.ReportAllocs()
		b.ResetTimer()
		c0 := processCPU()
		ok, all := measure(l)
		if c0 >= 0 {
			b.ReportMetric(float64(processCPU()-c0)/float64(all), "cpu-ns/op")
		}
		b.ReportMetric(float64(ok)/float64(all), "admitted/op")
	}
	b.Run("serial", func(b *testing.B) {
		run(b, func(l *Limiter) (ok, all int64) { return loop(l, 0, b.Loop) })
	})
	b.Run("parallel", func(b *testing.B) {
		run(b, func(l *Limiter) (ok, all int64) {
			var okAll, allAll, goroutines atomic.Int64
			b.RunParallel(func(pb *testing.PB) {
				ok, all := loop(l, int(goroutines.Add(1)), pb.Next)
				okAll.Add(ok)
				allAll.Add(all)
			})
			return okAll.Load(), allAll.Load()
		})
	})
}

// BenchmarkHotspotHotKey: every request carries the same value, a hit on a
// hot record. The leaky bucket admits every request, some with a wait:
// parallel goroutines' times drift apart, and the one behind queues behind
// the one ahead.
func BenchmarkHotspotHotKey(b *testing.B) {
	for _, cfg := range []Config{
		{Algorithm: TokenBucket, Limit: huge, Window: huge},
		{Algorithm: LeakyBucket, Limit: huge, Window: huge, MaxWait: huge},
	} {
		b.Run(string(cfg.Algorithm), func(b *testing.B) {
			benchAcquire(b, cfg, nil, []string{"user-42"})
		})
	}
}

// keys1M are one million distinct values of 8 to 12 bytes, as user IDs.
var keys1M = func() []string {
	keys := make([]string, 1_000_000)
	for i := range keys {
		keys[i] = "u-" + strconv.Itoa(i*7919+1_000_000)
	}
	return keys
}()

// BenchmarkHotspot10kKeys: ten thousand distinct values cycle through a
// table of 100 000, each seen twice before the clock starts (protected):
// every request is a hit on a record that is not the front, as when the
// users of a service take turns.
func BenchmarkHotspot10kKeys(b *testing.B) {
	cfg := Config{Limit: huge, Window: huge, MaxKeys: 100_000}
	prefill := func(l *Limiter) {
		for range 2 {
			for _, v := range keys1M[:10_000] {
				l.Acquire(0, v, 1)
			}
		}
	}
	benchAcquire(b, cfg, prefill, keys1M[:10_000])
}

// BenchmarkHotspot1MKeysHeld: one million distinct values cycle through a
// table of 2 000 000 that holds them all, each seen twice before the clock
// starts: every request is a hit on a record far from the CPU caches, as
// for core/internal/peerbench's 1M row.
func BenchmarkHotspot1MKeysHeld(b *testing.B) { bench1MHeld(b, keys1M) }

// BenchmarkHotspot1MKeysHeldRandom is BenchmarkHotspot1MKeysHeld with the
// values taking turns in a random order, not in the order they were
// inserted: the records of a shard, allocated in that order, are then not
// read one after another, as with real users, and a request waits for its
// value's bytes, its index slot and its record from memory in turn.
func BenchmarkHotspot1MKeysHeldRandom(b *testing.B) {
	values := slices.Clone(keys1M)
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(values), func(i, j int) { values[i], values[j] = values[j], values[i] })
	bench1MHeld(b, values)
}

// bench1MHeld runs benchAcquire with values, the values of keys1M in some
// order, on a table of 2 000 000 holding each of them, seen twice.
func bench1MHeld(b *testing.B, values []string) {
	cfg := Config{Limit: huge, Window: huge, MaxKeys: 2_000_000}
	prefill := func(l *Limiter) {
		for range 2 {
			for _, v := range keys1M {
				l.Acquire(0, v, 1)
			}
		}
	}
	benchAcquire(b, cfg, prefill, values)
}

// BenchmarkHotspot1MKeys: one million distinct values cycle through a table
// of 100 000, so nearly every request inserts a value and evicts another.
// The table is filled before the clock starts; parallel goroutines start at
// different offsets of the key list.
func BenchmarkHotspot1MKeys(b *testing.B) {
	cfg := Config{Limit: huge, Window: huge, MaxKeys: 100_000}
	prefill := func(l *Limiter) {
		for i := range 200_000 {
			l.Acquire(0, keys1M[len(keys1M)-1-i], 1)
		}
	}
	benchAcquire(b, cfg, prefill, keys1M)
}

// BenchmarkHotspot1MKeysInDebt is BenchmarkHotspot1MKeys with buckets that
// are still in debt when evicted (one request costs 10s of a bucket of
// 10 000s), as under a flood: every eviction writes a debt and every new
// value reads its cells (see debts).
func BenchmarkHotspot1MKeysInDebt(b *testing.B) {
	cfg := Config{Limit: 1000, Window: 10_000 * time.Second, MaxKeys: 100_000}
	prefill := func(l *Limiter) {
		for i := range 200_000 {
			l.Acquire(0, keys1M[len(keys1M)-1-i], 1)
		}
	}
	benchAcquire(b, cfg, prefill, keys1M)
}

// BenchmarkHotspotMemory reports the heap bytes per tracked value of a
// Limiter filled with 100 000 values of 8 to 12 bytes (bytes/key), the
// values' own strings not counted: the table copies them.
func BenchmarkHotspotMemory(b *testing.B) {
	for b.Loop() {
		b.ReportMetric(bytesPerKey(b, 100_000), "bytes/key")
	}
}

// bytesPerKey returns the growth of the live heap, per value, from before a
// Limiter with room for n values exists to after it holds n of them. It
// offers 3n distinct values, so that every shard is full.
func bytesPerKey(tb testing.TB, n int) float64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	l := mustNew(tb, Config{Limit: 10, Window: time.Second, MaxKeys: n}, nil)
	for _, k := range keys1M[:3*n] {
		l.Acquire(0, k, 1)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	if got := l.Len(); got != n {
		tb.Fatalf("Len() = %d after %d distinct values, want %d", got, 3*n, n)
	}
	runtime.KeepAlive(l)
	return float64(after.HeapAlloc-before.HeapAlloc) / float64(n)
}
