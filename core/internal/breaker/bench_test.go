package breaker

import (
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkAllowDone is a request through a closed breaker: Allow, then
// DoneOn with a good outcome. Each parallel goroutine reports as a CPU of
// its own and keeps its own time, as the Guard's requests do (their stripe
// and the Guard's clock, which only its goroutine writes).
func BenchmarkAllowDone(b *testing.B) {
	br, err := New(Config{Strategy: ErrorRatio, Threshold: 0.5}, nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	one := func(cpu uint32, now int64) {
		t, _, ok := br.Allow(now)
		if !ok {
			b.Fatal("rejected")
		}
		br.DoneOn(cpu, now, t, time.Millisecond, false)
	}
	b.Run("serial", func(b *testing.B) {
		b.ReportAllocs()
		now := int64(0)
		for b.Loop() {
			now += 1000
			one(0, now)
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		var cpus atomic.Uint32
		b.RunParallel(func(pb *testing.PB) {
			cpu, now := cpus.Add(1)-1, int64(0)
			for pb.Next() {
				now += 1000
				one(cpu, now)
			}
		})
	})
}
