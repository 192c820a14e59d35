package flow

import (
	"math/big"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestRemainingWithFraction: the Remaining of a TAT with a fraction, which
// a prepared bucket of Limit below Window computes without a division, is
// (left*Limit + Frac)/Window rounded down, left the whole nanoseconds of
// the bucket's room, for limits and windows over their whole range and the
// edges of the fraction.
func TestRemainingWithFraction(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 20_000 {
		w := time.Duration(1 + r.Int64N(int64(24*time.Hour)))
		if r.IntN(2) == 0 {
			w = time.Duration(1 + r.Int64N(1000))
		}
		lim := 1 + r.Int64N(int64(w))
		if lim == int64(w) {
			continue // no fraction: one per nanosecond
		}
		p := GCRA{Limit: lim, Window: w}.Prepare()
		capacity := p.Capacity()
		leftNS := r.Int64N(capacity.NS + 1)
		frac := []int64{0, 1, lim - 1, r.Int64N(lim)}[r.IntN(4)]
		left := Instant{leftNS, frac}
		if left.After(capacity) {
			continue
		}
		now := r.Int64N(1 << 40)
		tat := at(now).Plus(capacity.Minus(left, lim), lim)
		want := new(big.Int).Mul(big.NewInt(leftNS), big.NewInt(lim))
		want.Add(want, big.NewInt(frac)).Quo(want, big.NewInt(int64(w)))
		require.Equal(t, want.Int64(), p.remaining(now, tat, capacity), "limit %d per %dns, room %d+%d/%d ns", lim, w, leftNS, frac, lim)
	}
}
