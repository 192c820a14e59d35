package core_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/sluicekit/sluice/core"
)

// TestBlockReasonsAreEveryKindAndMore: the reasons are the kinds' names in
// the order of core.Kinds, then the two reasons that are no kind's.
func TestBlockReasonsAreEveryKindAndMore(t *testing.T) {
	r := core.BlockReasons()
	assert.Equal(t, []string{"flow", "concurrency", "hotspot", "breaker", "adaptive", "system", core.ReasonFallback, core.ReasonCancelled}, r)
	var kinds []string
	for _, k := range core.Kinds() {
		kinds = append(kinds, string(k.Kind))
	}
	assert.Equal(t, kinds, r[:len(kinds)])
	r[0] = "changed"
	assert.Equal(t, "flow", core.BlockReasons()[0], "the slice is the caller's")
}

func TestRTHistogramExplicit(t *testing.T) {
	var h core.RTHistogram
	h[0], h[2], h[3], h[len(h)-1] = 1, 2, 4, 8
	bounds, counts := h.Explicit()
	assert.Len(t, bounds, 11)
	assert.Equal(t, math.Ldexp(1, -15), bounds[0])
	assert.Equal(t, 32.0, bounds[len(bounds)-1])
	assert.Equal(t, []uint64{3, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 8}, counts)
	assert.Equal(t, math.Ldexp(1, -17), core.RTBound(0))
	assert.True(t, math.IsInf(core.RTBound(len(h)-1), 1))
	// Bucket j of the explicit form holds h's buckets 2j-1 and 2j (0 to 2
	// for the first, 23 alone for the last), and each bound is h's.
	for i := range h {
		h[i] = int64(i + 1)
	}
	bounds, counts = h.Explicit()
	assert.Equal(t, []uint64{1 + 2 + 3, 4 + 5, 6 + 7, 8 + 9, 10 + 11, 12 + 13, 14 + 15, 16 + 17, 18 + 19, 20 + 21, 22 + 23, 24}, counts)
	for j, b := range bounds {
		assert.Equal(t, core.RTBound(2*j+2), b)
	}
}
