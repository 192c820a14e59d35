package core_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core"
)

// Exit counts each request in the bucket of its response time.
func TestRTHistogram(t *testing.T) {
	g, fc := newGuard(t)
	ctx := context.Background()
	var want core.RTHistogram
	for _, tc := range []struct {
		rt     time.Duration
		bucket int
	}{
		{0, 0}, {5 * time.Microsecond, 0}, {10 * time.Microsecond, 1}, {100 * time.Microsecond, 4},
		{300 * time.Microsecond, 6}, {300 * time.Microsecond, 6}, {time.Millisecond, 8}, {250 * ms, 15},
		{time.Second, 17}, {time.Minute, 23},
	} {
		e, err := g.Enter(ctx, "GET /h")
		require.NoError(t, err)
		fc.Advance(tc.rt)
		e.Exit(nil)
		want[tc.bucket]++
	}
	st, ok := g.Stats("GET /h")
	require.True(t, ok)
	assert.Equal(t, want, st.Total.RTHistogram)
}

// WithPreciseTiming times requests to below a millisecond: the Guard's
// coarse clock (RTResolution) gives 0 or at least a millisecond.
func TestWithPreciseTiming(t *testing.T) {
	g, err := core.New(core.WithPreciseTiming())
	require.NoError(t, err)
	defer g.Close()
	for i := 0; ; i++ {
		require.Less(t, i, 1000, "no response time between 7.6µs and 977µs")
		e, err := g.Enter(context.Background(), "GET /p")
		require.NoError(t, err)
		time.Sleep(50 * time.Microsecond)
		e.Exit(nil)
		st, _ := g.Stats("GET /p")
		var sub int64
		for _, n := range st.Total.RTHistogram[1:8] { // (2^-17 s, 2^-10 s]
			sub += n
		}
		if sub > 0 {
			break
		}
	}
}
