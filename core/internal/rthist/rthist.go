// Package rthist is the arithmetic of core.RTHistogram's buckets that
// core's exporters (packages prometheus and otel) share: the bucket
// bounds, and the explicit-bucket form.
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

// Explicit returns h in the form of explicit-bucket histograms (Prometheus
// classic buckets, OpenTelemetry's explicit bucket histogram), at every
// other bound of h: bounds are Bound(2), Bound(4), ... Bound(22) (about
// 30µs to 32s, by factors of 4); counts[j] counts the requests over
// bounds[j-1] and at most bounds[j], and the last count those over the
// last bound. Both slices are new.
func Explicit(h *[Buckets]int64) (bounds []float64, counts []uint64) {
	bounds = make([]float64, 0, Buckets/2-1)
	counts = make([]uint64, Buckets/2)
	for i, n := range h {
		j := len(bounds)
		counts[j] += uint64(max(n, 0))
		if i%2 == 0 && i > 0 && i < Buckets-1 {
			bounds = append(bounds, Bound(i))
		}
	}
	return bounds, counts
}
