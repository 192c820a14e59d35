package stripe

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestPickerTokens: tokens made together have consecutive indexes, and the
// token put back is got back.
func TestPickerTokens(t *testing.T) {
	if raceEnabled {
		t.Skip("under -race, sync.Pool drops tokens at random")
	}
	p := NewPicker()
	release := p.Hold() // token 0
	assert.Equal(t, uint32(1), p.Pick(), "a new token while 0 is held")
	assert.Equal(t, uint32(1), p.Pick(), "the same token again")
	release()
}

func TestCount(t *testing.T) {
	n := Count()
	assert.True(t, n >= 1 && n <= 16 && n&(n-1) == 0, "a power of two in [1, 16], got %d", n)
}
