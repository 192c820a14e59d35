package window_test

import (
	"testing"
	"time"

	"github.com/sluicekit/sluice/core/clock"
	"github.com/sluicekit/sluice/core/internal/sysclock"
	"github.com/sluicekit/sluice/core/internal/window"
)

// BenchmarkLeapArrayAdd measures Add with readings of the system clock, so
// buckets rotate every 100ms as in production.
func BenchmarkLeapArrayAdd(b *testing.B) {
	setup := func(b *testing.B) (*window.LeapArray, clock.Clock) {
		a, err := window.New(10, time.Second)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		b.ResetTimer()
		return a, sysclock.New()
	}
	b.Run("serial", func(b *testing.B) {
		a, clk := setup(b)
		for b.Loop() {
			a.Add(int64(clk.Now()), window.Pass, 1)
		}
	})
	b.Run("parallel", func(b *testing.B) {
		a, clk := setup(b)
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				a.Add(int64(clk.Now()), window.Pass, 1)
			}
		})
	})
}
