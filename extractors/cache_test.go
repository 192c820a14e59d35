package extractors

import (
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCacheBoundAndPromotion(t *testing.T) {
	var c cache[string, int]
	c.init(100)
	for i := range 150 {
		k := strconv.Itoa(i)
		assert.Equal(t, i, c.store(k, i))
		v, ok := c.load(k)
		if i < 100 {
			require.True(t, ok, k)
			assert.Equal(t, i, v)
		} else {
			assert.False(t, ok, "past the bound %s is not cached", k)
		}
	}
	assert.Equal(t, 7, c.store("7", -1), "store keeps the cached value")

	// Reading the cached keys promotes them to the lock-free map.
	for range 2 {
		for i := range 100 {
			_, ok := c.load(strconv.Itoa(i))
			require.True(t, ok)
		}
	}
	assert.Len(t, *c.read.Load(), 100)
	assert.Nil(t, c.dirty)
}

// TestCacheFullTakesNoLock: once full, a cache holds every key in its
// lock-free map, and a miss (a client flooding new keys) neither waits for
// the lock nor is cached.
func TestCacheFullTakesNoLock(t *testing.T) {
	var c cache[string, int]
	c.init(10)
	for i := range 11 {
		c.store(strconv.Itoa(i), i)
	}
	require.True(t, c.full.Load())
	assert.Len(t, *c.read.Load(), 10)
	c.mu.Lock() // a miss that took the lock would block here
	defer c.mu.Unlock()
	for i := range 20 {
		k := strconv.Itoa(i)
		v, ok := c.load(k)
		assert.Equal(t, i < 10, ok, k)
		if ok {
			assert.Equal(t, i, v)
		}
		assert.Equal(t, i, c.store(k, i), k)
	}
	assert.Equal(t, 7, c.store("7", -1), "store keeps the cached value")
}

func TestCacheConcurrent(t *testing.T) {
	var c cache[string, string]
	c.init(64)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 2000 {
				k := strconv.Itoa((i * (g + 1)) % 200)
				v, ok := c.load(k)
				if !ok {
					v = c.store(k, "v"+k)
				}
				if v != "v"+k {
					t.Errorf("key %s: value %s", k, v)
					return
				}
			}
		})
	}
	wg.Wait()
	assert.LessOrEqual(t, len(*c.read.Load()), 64)
}
