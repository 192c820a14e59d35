package rthist

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestBound(t *testing.T) {
	assert.Equal(t, math.Ldexp(1, -17), Bound(0))
	assert.Equal(t, 1.0, Bound(17))
	assert.Equal(t, 32.0, Bound(22))
	assert.True(t, math.IsInf(Bound(23), 1))
}

func TestExplicit(t *testing.T) {
	var h [Buckets]int64
	for i := range h {
		h[i] = int64(i + 1)
	}
	bounds, counts := Explicit(&h)
	assert.Len(t, bounds, 11)
	assert.Equal(t, math.Ldexp(1, -15), bounds[0])
	assert.Equal(t, 32.0, bounds[10])
	// Bucket j of the explicit form holds h's buckets 2j-1 and 2j (0 to
	// 2 for the first, 23 alone for the last).
	assert.Equal(t, []uint64{1 + 2 + 3, 4 + 5, 6 + 7, 8 + 9, 10 + 11, 12 + 13, 14 + 15, 16 + 17, 18 + 19, 20 + 21, 22 + 23, 24}, counts)
}
