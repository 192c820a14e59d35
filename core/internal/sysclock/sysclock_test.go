package sysclock_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core/internal/sysclock"
)

func TestSystemNowMonotonic(t *testing.T) {
	c := sysclock.New()
	prev := c.Now()
	require.GreaterOrEqual(t, prev, time.Duration(0))
	for i := range 100000 {
		now := c.Now()
		if now < prev { // plain comparison: testify is slow in a hot loop
			t.Fatalf("reading %d went backwards: %s after %s", i, now, prev)
		}
		prev = now
	}
}

func TestSystemSleep(t *testing.T) {
	c := sysclock.New()
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	assert.NoError(t, c.Sleep(context.Background(), 0))
	assert.NoError(t, c.Sleep(context.Background(), -time.Second))
	assert.ErrorIs(t, c.Sleep(canceled, 0), context.Canceled)
	// A canceled context ends an hour-long sleep at once.
	assert.ErrorIs(t, c.Sleep(canceled, time.Hour), context.Canceled)
	// A short real sleep completes: the timer path.
	assert.NoError(t, c.Sleep(context.Background(), time.Microsecond))
}

// BenchmarkSystemNow is the cost of the one clock reading a decision makes;
// the flow and window benchmarks include it.
func BenchmarkSystemNow(b *testing.B) {
	c := sysclock.New()
	b.ReportAllocs()
	for b.Loop() {
		_ = c.Now()
	}
}
