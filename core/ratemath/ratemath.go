package ratemath

import (
	"math"
	"math/bits"
)

// MulDiv returns a*b/c rounded down: 0 when a or b is not positive, and the
// largest int64 when c is not positive or the quotient overflows.
func MulDiv(a, b, c int64) int64 {
	if a <= 0 || b <= 0 {
		return 0
	}
	if c <= 0 {
		return 1<<63 - 1
	}
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	if hi >= uint64(c) {
		return 1<<63 - 1
	}
	q, _ := bits.Div64(hi, lo, uint64(c))
	return int64(min(q, 1<<63-1))
}

// SlidingEstimate returns a sliding counter's weighted count: prev requests
// in the aligned window before the current one, weighted by the share of
// the sliding window of length w they still cover elapsed into the current
// one (elapsed clamped to [0, w]), plus cur in the current one.
func SlidingEstimate(prev, cur, elapsed, w int64) float64 {
	e := min(max(elapsed, 0), w)
	return float64(prev)*float64(w-e)/float64(w) + float64(cur)
}

// SlidingEarliest returns the time elapsed into an aligned window of
// length w, with prev requests in the window before and cur in it, at which
// n more fit under lim by SlidingEstimate: 0 when they fit at once. It
// assumes cur+n <= lim.
func SlidingEarliest(prev, cur, n, lim int64, w float64) float64 {
	room := float64(lim - cur - n)
	if prev == 0 || room >= float64(prev) {
		return 0
	}
	return w * (1 - room/float64(prev))
}

// SlidingWait returns the nanoseconds until n more requests fit under lim
// by SlidingEstimate, from elapsed into an aligned window of length w with
// prev requests in the window before and cur in it, rounded up: in this
// window or, when cur leaves no room for n, in the next one (where cur
// becomes prev). It is w when n is more than lim, and 0 when they fit now.
func SlidingWait(prev, cur, elapsed, n, lim, w int64) int64 {
	if n > lim {
		return w
	}
	at := SlidingEarliest(prev, cur, n, lim, float64(w))
	if cur+n > lim {
		at = float64(w) + SlidingEarliest(cur, 0, n, lim, float64(w))
	}
	return int64(max(math.Ceil(at-float64(elapsed)), 0))
}
