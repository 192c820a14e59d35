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
// coarse clock, advanced every millisecond, gives 0 or at least one. A
// request's response time lies between the spans measured inside and
// around its Enter and Exit; each request whose inner span is over 2^-17s
// and whose outer span is at most 2^-10s is counted in the buckets between.
// The request busy-waits (a sleep may take a millisecond on a loaded host),
// and those a busy host stretches beyond 2^-10s are not checked.
func TestWithPreciseTiming(t *testing.T) {
	g, err := core.New(core.WithPreciseTiming())
	require.NoError(t, err)
	defer g.Close()
	const lo, hi = time.Second >> 17, time.Second >> 10
	sub := func() (n int64) {
		st, _ := g.Stats("GET /p")
		for _, c := range st.Total.RTHistogram[1:8] { // (2^-17 s, 2^-10 s]
			n += c
		}
		return n
	}
	checked := 0
	for i := 0; checked < 3; i++ {
		require.Less(t, i, 100_000, "%d requests took at most %s", checked, hi)
		before := sub()
		start := time.Now()
		e, err := g.Enter(context.Background(), "GET /p")
		require.NoError(t, err)
		in := time.Now()
		for time.Since(in) <= 2*lo {
		}
		out := time.Now()
		e.Exit(nil)
		end := time.Now()
		if out.Sub(in) > lo && end.Sub(start) <= hi {
			checked++
			require.Equal(t, before+1, sub(), "request %d: within %s, around %s", i, out.Sub(in), end.Sub(start))
		}
	}
}
