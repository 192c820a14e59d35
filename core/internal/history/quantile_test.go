package history_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/sluicekit/sluice/core/internal/history"
)

// pow2 bounds buckets at 1, 2, 4, 8, then +Inf.
func pow2(i int) float64 {
	if i >= 4 {
		return math.Inf(1)
	}
	return math.Ldexp(1, i)
}

func TestQuantile(t *testing.T) {
	for _, c := range []struct {
		counts []int64
		q      float64
		want   float64
	}{
		{[]int64{0, 0, 0, 0, 0}, 0.5, math.NaN()},
		{[]int64{10, 0, 0, 0, 0}, 0.5, 0.5},                   // linear in the first: 0..1
		{[]int64{0, 0, 10, 0, 0}, 0.5, math.Sqrt(8)},          // geometric in (2, 4]
		{[]int64{0, 0, 10, 0, 0}, 1, 4},                       // the top of the bucket
		{[]int64{5, 0, 0, 5, 0}, 0.5, 1},                      // the top of the first half
		{[]int64{5, 0, 0, 5, 0}, 0.99, 4 * math.Pow(2, 0.98)}, // in (4, 8]
		{[]int64{1, 0, 0, 0, 9}, 0.99, 8},                     // over the last bound: its lower bound
		{[]int64{50, 49, 0, 0, 1}, 0.99, 2},                   // the 99th of 100: the top of bucket 1
	} {
		got := history.Quantile(c.counts, pow2, c.q)
		if math.IsNaN(c.want) {
			assert.True(t, math.IsNaN(got), "%v q%v: %v", c.counts, c.q, got)
			continue
		}
		assert.InDelta(t, c.want, got, 1e-9, "%v q%v", c.counts, c.q)
	}
}
