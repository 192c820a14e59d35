package clock_test

import (
	"testing"

	"github.com/sluicekit/sluice/core/clock"
)

// BenchmarkSystemNow is the cost of the one clock reading a decision makes;
// the flow and window benchmarks include it.
func BenchmarkSystemNow(b *testing.B) {
	c := clock.NewSystem()
	b.ReportAllocs()
	for b.Loop() {
		_ = c.Now()
	}
}
