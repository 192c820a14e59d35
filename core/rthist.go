package core

import (
	"math"
	"math/bits"
	"sync/atomic"
)

// RTHistogram counts a resource's completed requests by response time
// (Totals.RTHistogram), in buckets whose bounds are powers of two seconds,
// as Prometheus native histograms of schema 0 have them: RTHistogram[i]
// counts the requests that took more than RTBound(i-1) and at most
// RTBound(i). Bucket 0 counts those of at most RTBound(0), 2^-17 s (about
// 7.6µs, 0 included); the last bucket, those over 32s. The resolution of
// the response times is the Guard's: about a millisecond, or a nanosecond
// with WithPreciseTiming. It counts requests, not permits (WithCount).
type RTHistogram [rtBuckets]int64

// rtBuckets is the number of buckets of an RTHistogram; rtMinExp is the
// exponent of the upper bound of bucket 0, in seconds.
const (
	rtBuckets = 24
	rtMinExp  = -17
)

// RTBound returns the upper bound, in seconds, of bucket i of an
// RTHistogram: 2^(i-17), and +Inf for the last bucket (and beyond).
func RTBound(i int) float64 {
	if i >= rtBuckets-1 {
		return math.Inf(1)
	}
	return math.Ldexp(1, i+rtMinExp)
}

// rtBucket returns the bucket of an RTHistogram that counts a response
// time of rt nanoseconds: the smallest i with rt <= 2^(i+rtMinExp) s, that
// is rt<<-rtMinExp <= 1e9<<i. For a = rt<<-rtMinExp >= 1 that holds when
// (a-1)/1e9 < 1<<i: i is the bit length of (a-1)/1e9.
func rtBucket(rt int64) int {
	const maxRT = 1 << (62 + rtMinExp) // well in the last bucket; no overflow
	if rt <= 0 {
		return 0
	}
	rt = min(rt, maxRT)
	return min(bits.Len64(uint64(rt<<-rtMinExp-1)/1e9), rtBuckets-1)
}

// rtCounts are the atomic counts of an RTHistogram (see resStripe).
type rtCounts [rtBuckets]atomic.Int64

// Explicit returns h in the form of explicit-bucket histograms (Prometheus
// classic buckets, OpenTelemetry's explicit bucket histogram), at every
// other bound of h: bounds are RTBound(2), RTBound(4), ... RTBound(22)
// (about 30µs to 32s, by factors of 4); counts[j] counts the requests over
// bounds[j-1] and at most bounds[j], and the last count those over the
// last bound. Both slices are new.
func (h *RTHistogram) Explicit() (bounds []float64, counts []uint64) {
	bounds = make([]float64, 0, rtBuckets/2-1)
	counts = make([]uint64, rtBuckets/2)
	for i, n := range h {
		j := len(bounds)
		counts[j] += uint64(max(n, 0))
		if i%2 == 0 && i > 0 && i < rtBuckets-1 {
			bounds = append(bounds, RTBound(i))
		}
	}
	return bounds, counts
}
