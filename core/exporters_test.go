package core_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/sluicekit/sluice/core"
)

func TestBlockReasonsAreEveryKindAndMore(t *testing.T) {
	r := core.BlockReasons()
	assert.Equal(t, []string{"flow", "concurrency", "hotspot", "breaker", core.ReasonFallback, core.ReasonCancelled, "adaptive", "system"}, r)
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
}
