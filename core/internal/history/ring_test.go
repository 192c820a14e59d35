package history_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core/internal/history"
)

func TestNewRejectsBadSizes(t *testing.T) {
	for _, c := range [][2]int{{0, 1}, {1, 0}, {-1, 3}} {
		_, err := history.New(c[0], c[1])
		assert.Error(t, err, "%v", c)
	}
}

// col returns column c from step from, NaN written as -1 to compare.
func col(r *history.Ring, c int, from int64) []float64 {
	out := r.Column(nil, c, from)
	for i, v := range out {
		if math.IsNaN(v) {
			out[i] = -1
		}
	}
	return out
}

func TestRingKeepsTheNewestSamples(t *testing.T) {
	r, err := history.New(4, 2)
	require.NoError(t, err)
	assert.Equal(t, 4, r.Len())
	assert.Empty(t, r.Column(nil, 0, 0))
	n, _ := r.Held()
	assert.Zero(t, n)

	// A table of puts, each followed by what columns 0 and 1 hold from
	// step 0, and from step 12.
	for _, c := range []struct {
		step   int64
		vals   [2]float32
		c0, c1 []float64
		from12 []float64
		held   int
		last   int64
	}{
		{10, [2]float32{1, 10}, []float64{1}, []float64{10}, nil, 1, 10},
		{11, [2]float32{2, 20}, []float64{1, 2}, []float64{10, 20}, nil, 2, 11},
		{13, [2]float32{4, 40}, []float64{1, 2, -1, 4}, []float64{10, 20, -1, 40}, []float64{-1, 4}, 4, 13}, // 12 skipped
		{14, [2]float32{5, 50}, []float64{2, -1, 4, 5}, []float64{20, -1, 40, 50}, []float64{-1, 4, 5}, 4, 14},
		{20, [2]float32{9, 90}, []float64{-1, -1, -1, 9}, []float64{-1, -1, -1, 90}, []float64{-1, -1, -1, 9}, 4, 20}, // a gap longer than the ring
		{100, [2]float32{7, 70}, []float64{-1, -1, -1, 7}, []float64{-1, -1, -1, 70}, []float64{-1, -1, -1, 7}, 4, 100},
	} {
		r.Put(c.step, c.vals[:])
		assert.Equal(t, c.c0, col(r, 0, 0), "column 0 after step %d", c.step)
		assert.Equal(t, c.c1, col(r, 1, 0), "column 1 after step %d", c.step)
		if c.from12 != nil {
			assert.Equal(t, c.from12, col(r, 0, 12), "column 0 from 12 after step %d", c.step)
		}
		held, last := r.Held()
		assert.Equal(t, c.held, held)
		assert.Equal(t, c.last, last)
	}
	assert.Empty(t, r.Column(nil, 0, 101), "from after the newest")
}

func TestRingPanicsOnMisuse(t *testing.T) {
	r, err := history.New(3, 2)
	require.NoError(t, err)
	assert.Panics(t, func() { r.Put(1, []float32{1}) }, "too few values")
	r.Put(5, []float32{1, 2})
	assert.Panics(t, func() { r.Put(5, []float32{1, 2}) }, "the same step again")
	assert.Panics(t, func() { r.Put(4, []float32{1, 2}) }, "an earlier step")
}

func TestRingBytesAreFixed(t *testing.T) {
	r, err := history.New(600, 4)
	require.NoError(t, err)
	before := r.Bytes()
	assert.Equal(t, 600*4*4+48, before)
	for s := int64(0); s < 5000; s++ {
		r.Put(s, []float32{1, 2, 3, float32(s)})
	}
	assert.Equal(t, before, r.Bytes())
	got := r.Column(nil, 3, 0)
	assert.Len(t, got, 600)
	assert.Equal(t, float64(4400), got[0])
	assert.Equal(t, float64(4999), got[599])
}
