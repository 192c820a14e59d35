package system

import (
	"testing"
	"time"

	"github.com/sluicekit/sluice/core/internal/priority"
)

// BenchmarkAcquireBBR is a request decided by the BBR check while the CPU
// is over the threshold, and its end: the bound read from the window of
// completions and of minimum RTs, and the flood's refusals: 130ns, no
// allocation, on the 2-vCPU VM with other work on it (121ns before the
// flood's refusals were read; the check applies only while the CPU is
// over the threshold).
//
//	go test -run '^$' -bench AcquireBBR -benchmem ./core/internal/system/
func BenchmarkAcquireBBR(b *testing.B) {
	l := New(Config{Signal: CPU, Threshold: 0.5, BBR: true}, nil)
	now := 10 * int64(time.Second)
	for i := range 1000 { // a second of 1ms requests ended
		l.Acquire(now+int64(i)*int64(time.Millisecond), 1, 0.1, priority.Default)
		l.Done(now+int64(i+1)*int64(time.Millisecond), int64(time.Millisecond), 1, priority.Default, false)
	}
	now += int64(time.Second)
	b.ReportAllocs()
	for b.Loop() {
		if ok, _ := l.Acquire(now, 1, 0.9, priority.Default); ok {
			l.Done(now, int64(time.Millisecond), 1, priority.Default, false)
		}
	}
}
