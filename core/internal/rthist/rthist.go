// Package rthist is the bucket bounds of core.RTHistogram, which core and
// the history's percentiles (package history) share.
package rthist

import "math"

// Buckets is the number of buckets of a core.RTHistogram; MinExp is the
// exponent of the upper bound of bucket 0, in seconds.
const (
	Buckets = 24
	MinExp  = -17
)

// Bound returns the upper bound, in seconds, of bucket i of a
// core.RTHistogram: 2^(i-17), and +Inf for the last bucket (and beyond).
func Bound(i int) float64 {
	if i >= Buckets-1 {
		return math.Inf(1)
	}
	return math.Ldexp(1, i+MinExp)
}
