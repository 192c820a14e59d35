package core

import (
	"math/bits"
	"sync/atomic"

	"github.com/sluicekit/sluice/core/internal/rthist"
)

// RTHistogram counts a resource's completed requests by response time
// (Totals.RTHistogram), in buckets whose bounds are powers of two seconds,
// as Prometheus native histograms of schema 0 have them: RTHistogram[i]
// counts the requests that took more than 2^(i-18) s and at most
// 2^(i-17) s. Bucket 0 counts those of at most 2^-17 s (about 7.6µs, 0
// included); the last bucket, bucket 23, those over 32s (2^5 s). Response
// times are read on the Guard's clock, the monotonic one by default, to the
// nanosecond. It counts requests, not permits (WithCount).
type RTHistogram [rtBuckets]int64

// The number of buckets of an RTHistogram and rtBucket's exponent (see rthist).
const (
	rtBuckets = rthist.Buckets
	rtMinExp  = rthist.MinExp
)

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
