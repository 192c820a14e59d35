package core

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestResourceTableHotSlots: names that share a hot slot (the same length,
// or lengths 16 apart) each get their own resource, whichever was looked
// up first, and again on every later lookup, from the map or the slot.
func TestResourceTableHotSlots(t *testing.T) {
	tb := newResourceTable(100)
	names := []string{"GET /a", "GET /b", "GET /a/b/c/d/e/f/g/h/i", "PUT /a", string([]byte("GET /a"))}
	for round := range 3 {
		for _, name := range names {
			r, ok := tb.get(name)
			require.True(t, ok)
			assert.Equal(t, name, r.name, "round %d", round)
		}
	}
	seen := map[*resource]string{}
	for _, name := range names {
		r, _ := tb.get(name)
		if other, ok := seen[r]; ok {
			assert.Equal(t, other, name, "two names share a resource")
		}
		seen[r] = name
	}
	assert.Len(t, seen, 4)
	// Beyond the bound, names go to the overflow resource, never to a
	// hot slot's.
	small := newResourceTable(1)
	first, ok := small.get("GET /x")
	require.True(t, ok)
	for i := range 40 {
		name := fmt.Sprint("GET /", i)
		r, ok := small.get(name)
		assert.False(t, ok, name)
		assert.Same(t, small.overflow, r, name)
	}
	again, _ := small.get("GET /x")
	assert.Same(t, first, again)
}
