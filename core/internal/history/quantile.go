package history

import "math"

// Quantile returns the q-quantile (0 < q <= 1) of the values counted in
// buckets: counts[i] counts the values above bound(i-1) and at most
// bound(i), counts[0] those at most bound(0) (from 0). It interpolates
// within the bucket the quantile falls in, geometrically (bounds growing
// by a factor, as powers of two do), linearly in the first; a quantile in
// a last bucket without an upper bound (+Inf) is its lower bound. It
// returns NaN when counts count nothing.
func Quantile(counts []int64, bound func(i int) float64, q float64) float64 {
	var total int64
	for _, n := range counts {
		total += max(n, 0)
	}
	if total == 0 {
		return math.NaN()
	}
	rank := q * float64(total)
	var cum float64
	for i, n := range counts {
		if n <= 0 {
			continue
		}
		if cum+float64(n) < rank && i < len(counts)-1 {
			cum += float64(n)
			continue
		}
		f := min(max((rank-cum)/float64(n), 0), 1)
		upper := bound(i)
		if i == 0 {
			return f * upper
		}
		lower := bound(i - 1)
		if math.IsInf(upper, 1) {
			return lower
		}
		return lower * math.Pow(upper/lower, f)
	}
	return math.NaN() // not reached: total > 0
}
