package stripe

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPickerTokens: a processor gets its token back, and a processor
// without one gets a new token with the next stripe.
func TestPickerTokens(t *testing.T) {
	if raceEnabled {
		t.Skip("under -race, sync.Pool drops tokens at random")
	}
	if Count() < 2 {
		t.Skip("one stripe")
	}
	p := NewPicker()
	release := p.Hold() // token 0
	assert.Equal(t, uint32(1), p.Pick(), "a new token while 0 is held")
	assert.Equal(t, uint32(1), p.Pick(), "the same token again")
	release()
}

// TestTokensSharingAStripeMoveApart: two tokens that keep picking the same
// stripe by turns move until they pick different ones, and then stay.
func TestTokensSharingAStripeMoveApart(t *testing.T) {
	if Count() < 2 {
		t.Skip("one stripe")
	}
	p := NewPicker()
	a, b := &token{}, &token{}
	for range 1000 {
		p.pickWith(a)
		p.pickWith(b)
	}
	ia, ib := p.pickWith(a), p.pickWith(b)
	require.NotEqual(t, ia, ib, "still on one stripe")
	for range 100 {
		assert.Equal(t, ia, p.pickWith(a))
		assert.Equal(t, ib, p.pickWith(b))
	}
	assert.Less(t, ia, uint32(Count()))
	assert.Less(t, ib, uint32(Count()))
}

// TestOneTokenStays: a token alone on its stripe never moves, and a
// single miss (another token picked its stripe once) does not move it.
func TestOneTokenStays(t *testing.T) {
	p := NewPicker()
	a, b := &token{}, &token{}
	for range movesAfter - 1 {
		p.pickWith(a)
		p.pickWith(b) // b picks a's stripe once between two of a's
		p.pickWith(a)
		p.pickWith(a)
	}
	assert.Equal(t, uint32(0), a.i)
}

// TestOneStripeNoToken: with one stripe (GOMAXPROCS 1), Pick answers 0
// without the pool: no token is made.
func TestOneStripeNoToken(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	p := NewPicker()
	for range 3 {
		assert.Zero(t, p.Pick())
	}
	assert.Zero(t, p.next.Load(), "tokens made")
}

func TestCount(t *testing.T) {
	n := Count()
	assert.True(t, n >= 1 && n <= 16 && n&(n-1) == 0, "a power of two in [1, 16], got %d", n)
}

// TestLeaseSize: a lease is at most MaxLease and 1/(leaseShare·stripes) of
// what is left, and none below minLease; MinLeased is where leasing starts.
func TestLeaseSize(t *testing.T) {
	for _, tc := range []struct {
		left    int64
		stripes int
		want    int64
	}{
		{1 << 30, 2, MaxLease},
		{MinLeased(2), 2, minLease},
		{MinLeased(2) - 1, 2, 0},
		{20 * leaseShare * 2, 2, 20},
		{MinLeased(16), 16, minLease},
		{MinLeased(16) - 1, 16, 0},
		{0, 1, 0},
	} {
		assert.Equal(t, tc.want, LeaseSize(tc.left, tc.stripes), "LeaseSize(%d, %d)", tc.left, tc.stripes)
	}
	assert.Equal(t, 3, Of(7, 4))
	assert.Equal(t, 0, Of(7, 1))
}
