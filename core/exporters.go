package core

import (
	"slices"

	"github.com/sluicekit/sluice/core/internal/rthist"
)

// BlockReasons returns the reasons Totals.BlockedBy counts blocked requests
// by, in a fixed order: the names of the kinds in the order of Kinds, then
// ReasonFallback and ReasonCancelled. Exporters report every one, at 0
// until it blocks a request. The slice is new.
func BlockReasons() []string { return slices.Clone(blockReasons[:]) }

// RTBound returns the upper bound, in seconds, of bucket i of an
// RTHistogram: 2^(i-17), and +Inf for the last bucket.
func RTBound(i int) float64 { return rthist.Bound(i) }

// Explicit returns h as an explicit-bucket histogram (Prometheus classic
// buckets, OpenTelemetry's explicit bucket histogram) at every other
// bound of h: bounds are RTBound(2), RTBound(4), ... RTBound(22), powers of
// 4 from 2^-15 s (about 30µs) to 32 s; counts[j] counts the requests over
// bounds[j-1] and at most bounds[j], and the last count those over the
// last bound. Both slices are new.
func (h *RTHistogram) Explicit() (bounds []float64, counts []uint64) {
	bounds = make([]float64, 0, rtBuckets/2-1)
	counts = make([]uint64, rtBuckets/2)
	for i, n := range h {
		counts[len(bounds)] += uint64(max(n, 0))
		if i%2 == 0 && i > 0 && i < rtBuckets-1 {
			bounds = append(bounds, RTBound(i))
		}
	}
	return bounds, counts
}
