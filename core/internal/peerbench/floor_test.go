package peerbench

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluicekit/sluice/core/stripe"
)

// The floor benchmarks measure, in the same run as the peers, the parts no
// pass of a flow rule can do without: one reading of the monotonic clock
// (time.Since, which x/time/rate and uber's time.Now double with the wall
// clock), the pick of the CPU's stripe (stripe.Picker), and a pass made of
// them and nothing else: the clock, the pick, a lease's compare-and-swap,
// and the adds of the entered and exited counts. What a flow pass costs
// above BenchmarkFloorPass is its bookkeeping: the resource and binding
// lookups, the windows' buckets, the decision, the Entry:
//
//	go -C core/internal/peerbench test -run '^$' -bench 'Floor|PassSluiceFlow|PassUber' .

func BenchmarkFloorMonotonic(b *testing.B) {
	origin := time.Now()
	run(b, func(b *testing.B) {
		if time.Since(origin) < 0 {
			b.Fatal("monotonic clock went back")
		}
	})
}

func BenchmarkFloorTimeNow(b *testing.B) {
	origin := time.Now()
	run(b, func(b *testing.B) {
		if time.Now().Before(origin) {
			b.Fatal("clock went back")
		}
	})
}

func BenchmarkFloorPick(b *testing.B) {
	p, n := stripe.NewPicker(), uint32(stripe.Count())
	run(b, func(b *testing.B) {
		if p.Pick() >= n {
			b.Fatal("stripe out of range")
		}
	})
}

// floorStripe is a stripe of BenchmarkFloorPass's counts, a cache line
// each as the Guard's.
type floorStripe struct {
	lease, entered, exited atomic.Int64
	_                      [40]byte
}

func BenchmarkFloorPass(b *testing.B) {
	origin := time.Now()
	p := stripe.NewPicker()
	st := make([]floorStripe, stripe.Count())
	for i := range st {
		st[i].lease.Store(1 << 62)
	}
	run(b, func(b *testing.B) {
		now := time.Since(origin)
		s := &st[stripe.Of(p.Pick(), len(st))]
		if w := s.lease.Load(); now < 0 || !s.lease.CompareAndSwap(w, w-1) {
			return // another goroutine took this permit: counted as a pass all the same
		}
		s.entered.Add(1)
		s.exited.Add(1)
	})
}
