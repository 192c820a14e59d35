package sluiceprom

import (
	"math"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/sluicekit/sluice/core"
)

// durationMetric returns the histogram h of the response times of a
// resource, whose sum is sum seconds: classic buckets at the bounds of
// RTHistogram.Explicit, and native buckets of schema 0, h's own, in one metric, as a
// prometheus.Histogram with both kinds of buckets exposes them (the text
// format carries the classic ones, the protobuf format both). h's bucket 0
// is the native zero bucket; its last bucket, over 32 s, is the native
// bucket (32 s, 64 s].
func durationMetric(desc *prometheus.Desc, h *core.RTHistogram, sum float64, resource string) (prometheus.Metric, error) {
	bounds, counts := h.Explicit()
	cumulative := make(map[float64]uint64, len(bounds))
	var count uint64
	for j, b := range bounds {
		count += counts[j]
		cumulative[b] = count
	}
	count += counts[len(bounds)]
	classic, err := prometheus.NewConstHistogram(desc, count, sum, cumulative, resource)
	if err != nil {
		return nil, err
	}
	positive := map[int]int64{}
	for i := 1; i < len(h); i++ {
		if h[i] > 0 {
			positive[nativeIndex(i, len(h))] += h[i]
		}
	}
	// No created timestamp: Write keeps the classic one's, none.
	native, err := prometheus.NewConstNativeHistogram(desc, count, sum, positive, nil, uint64(max(h[0], 0)), 0, core.RTBound(0), time.Time{}, resource)
	if err != nil {
		return nil, err
	}
	return classicAndNative{classic, native}, nil
}

// nativeIndex returns the index in a native histogram of schema 0 of
// bucket i of an RTHistogram of n buckets: k for the bucket (2^(k-1),
// 2^k] seconds; the last bucket has the index after the one before it.
func nativeIndex(i, n int) int {
	if i == n-1 {
		return nativeIndex(i-1, n) + 1
	}
	_, exp := math.Frexp(core.RTBound(i)) // 2^k = 0.5 * 2^exp
	return exp - 1
}

// classicAndNative is a histogram with the classic buckets of one const
// histogram and the native buckets of another, of the same observations.
type classicAndNative struct{ classic, native prometheus.Metric }

func (m classicAndNative) Desc() *prometheus.Desc { return m.classic.Desc() }

func (m classicAndNative) Write(out *dto.Metric) error {
	var n dto.Metric
	if err := m.native.Write(&n); err != nil {
		return err
	}
	if err := m.classic.Write(out); err != nil {
		return err
	}
	h, nh := out.Histogram, n.Histogram
	h.Schema, h.ZeroThreshold, h.ZeroCount = nh.Schema, nh.ZeroThreshold, nh.ZeroCount
	h.PositiveSpan, h.PositiveDelta = nh.PositiveSpan, nh.PositiveDelta
	return nil
}
