package ratemath_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/sluicekit/sluice/core/ratemath"
)

func TestMulDiv(t *testing.T) {
	const maxInt = 1<<63 - 1
	tests := []struct{ a, b, c, want int64 }{
		{0, 5, 3, 0},
		{-1, 5, 3, 0},
		{5, -1, 3, 0},
		{5, 3, 0, maxInt},
		{1, int64(time.Second), 3000, 333333},
		{7, 3, 2, 10},
		{maxInt, 2, 2, maxInt},
		{maxInt, maxInt, maxInt, maxInt},
		{maxInt, maxInt, 1, maxInt}, // saturates
		{1 << 62, 4, 1, maxInt},
		{1 << 40, 1 << 40, 1 << 30, 1 << 50},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, ratemath.MulDiv(tt.a, tt.b, tt.c), "MulDiv(%d, %d, %d)", tt.a, tt.b, tt.c)
	}
}

// TestSlidingEarliest checks that n more requests fit by SlidingEstimate at
// the time SlidingEarliest returns, and not a nanosecond before.
func TestSlidingEarliest(t *testing.T) {
	const w = int64(time.Second)
	for _, tt := range []struct{ prev, cur, n, lim int64 }{
		{0, 0, 1, 10}, {10, 0, 1, 10}, {10, 5, 1, 10}, {7, 3, 2, 10}, {1000, 999, 1, 1000}, {3, 0, 3, 3},
	} {
		e := ratemath.SlidingEarliest(tt.prev, tt.cur, tt.n, tt.lim, float64(w))
		at := int64(e)
		if float64(at) < e {
			at++
		}
		assert.LessOrEqual(t, ratemath.SlidingEstimate(tt.prev, tt.cur+tt.n, at, w), float64(tt.lim), "%+v at %d", tt, at)
		if at > 0 {
			assert.Greater(t, ratemath.SlidingEstimate(tt.prev, tt.cur+tt.n, at-1, w), float64(tt.lim), "%+v at %d", tt, at-1)
		}
	}
}

// A sliding counter of 10 per second, with 10 requests in the previous
// second and 4 in this one, 600ms into it: the previous second still
// weighs 40%.
func ExampleSlidingEstimate() {
	fmt.Println(ratemath.SlidingEstimate(10, 4, int64(600*time.Millisecond), int64(time.Second)))
	// 2 more fit once the previous second weighs 40% no more: at 600ms.
	fmt.Println(time.Duration(ratemath.SlidingEarliest(10, 4, 2, 10, float64(time.Second))))
	// Output:
	// 8
	// 600ms
}

// TestSlidingWait checks that n more requests fit, in the window they fall
// in, SlidingWait nanoseconds on, and not a nanosecond before.
func TestSlidingWait(t *testing.T) {
	const w = int64(time.Second)
	// fits returns whether n more fit at elapsed from the window's start.
	fits := func(prev, cur, n, lim, elapsed int64) bool {
		if elapsed >= w { // the next window: cur weighs as prev
			return ratemath.SlidingEstimate(cur, n, elapsed-w, w) <= float64(lim)
		}
		return ratemath.SlidingEstimate(prev, cur+n, elapsed, w) <= float64(lim)
	}
	for _, tt := range []struct{ prev, cur, n, lim, elapsed int64 }{
		{0, 0, 1, 10, 0}, {10, 0, 1, 10, 0}, {10, 5, 1, 10, 300}, {7, 3, 2, 10, w / 3},
		{1000, 999, 1, 1000, 5}, {3, 0, 3, 3, 0}, {2, 2, 1, 2, w / 2}, {0, 10, 1, 10, w - 1},
	} {
		wait := ratemath.SlidingWait(tt.prev, tt.cur, tt.elapsed, tt.n, tt.lim, w)
		assert.True(t, fits(tt.prev, tt.cur, tt.n, tt.lim, tt.elapsed+wait), "%+v: after %d", tt, wait)
		if wait > 0 {
			assert.False(t, fits(tt.prev, tt.cur, tt.n, tt.lim, tt.elapsed+wait-1), "%+v: after %d", tt, wait-1)
		}
	}
	assert.Equal(t, w, ratemath.SlidingWait(0, 0, 0, 11, 10, w), "more than the limit")
}
