package core

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestRTBucket(t *testing.T) {
	for _, tc := range []struct {
		rt   time.Duration
		want int
	}{
		{-1, 0}, {0, 0}, {1, 0}, {7629, 0}, // 2^-17 s = 7629.39ns
		{7630, 1}, {15258, 1}, {15259, 2},
		{976562, 7}, {976563, 8}, {time.Millisecond, 8}, // 2^-10 s = 976562.5ns
		{1953125, 8}, {1953126, 9}, // 2^-9 s
		{time.Second, 17}, {time.Second + 1, 18},
		{32 * time.Second, 22}, {32*time.Second + 1, 23}, {time.Hour, 23}, {math.MaxInt64, 23},
	} {
		assert.Equal(t, tc.want, rtBucket(int64(tc.rt)), "%d", tc.rt)
	}
	// Every bucket is the one whose bounds hold rt, compared exactly:
	// rt/1e9 <= 2^(i-17) is rt*2^17 <= 1e9*2^i.
	within := func(rt int64, e int) bool { // rt ns <= 2^e s
		a := new(big.Int).Lsh(big.NewInt(rt), 17)
		b := new(big.Int).Lsh(big.NewInt(1e9), uint(e+17))
		return a.Cmp(b) <= 0
	}
	for range 100000 {
		rt := rand.Int64N(int64(64*time.Second)) >> rand.IntN(40)
		i := rtBucket(rt)
		if i < rtBuckets-1 {
			assert.True(t, within(rt, i+rtMinExp), "%d in bucket %d: at most its bound", rt, i)
		}
		if i > 0 {
			assert.False(t, within(rt, i-1+rtMinExp), "%d in bucket %d: over the bound below", rt, i)
		}
	}
}

// TestStripeHistogram: a stripe's first histogram bucket is the completed
// requests less the others' (see resStripe), permits beyond the first not
// counted, and never goes down when a reader finds an exit half counted.
func TestStripeHistogram(t *testing.T) {
	r := &resource{name: "r"}
	r.stripes.make((*resStripe).init)
	st, _ := r.stripes.of(0)
	hist := func() RTHistogram {
		var h RTHistogram
		st.addRTs(&h)
		return h
	}
	for range 4 {
		st.exit(1, 0, 1)
	}
	st.exit(3, int64(time.Millisecond), 1) // bucket 8, 3 permits
	st.exit(2, 1, 1)                       // bucket 0, 2 permits
	want := RTHistogram{0: 5, 8: 1}
	assert.Equal(t, want, hist())
	assert.Equal(t, int64(6), st.completed())
	assert.Equal(t, int64(9), st.exited.Load())

	// An exit in bucket 3 that has counted its bucket and not yet exited:
	// the first bucket reads what it read before, not one less.
	st.rts[3].Add(1)
	want[3] = 1
	assert.Equal(t, want, hist())
	st.exited.Add(1)
	assert.Equal(t, want, hist())
	st.exit(1, 0, 1)
	want[0]++
	assert.Equal(t, want, hist())
}
