package breaker

import (
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkAllowDone is a request through a closed breaker: Allow, then
// Done with a good outcome.
func BenchmarkAllowDone(b *testing.B) {
	br, err := New(Config{Strategy: ErrorRatio, Threshold: 0.5}, nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	var clock atomic.Int64
	one := func() {
		now := clock.Add(1000)
		t, _, ok := br.Allow(now)
		if !ok {
			b.Fatal("rejected")
		}
		br.Done(now, t, time.Millisecond, false)
	}
	b.Run("serial", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			one()
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				one()
			}
		})
	})
}
