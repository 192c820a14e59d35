package extractors

import (
	"sync"
	"sync/atomic"
)

// cache is a bounded map for values computed once per key and read on every
// request: resource names by route, parsed specs by param string. Reads of a
// settled key load an immutable map without locking or allocating. New keys
// go to a dirty map under mu, which replaces the read map once it has been
// missed as many times as it has entries, so copying costs O(1) amortized
// per operation (the scheme of sync.Map, with typed keys that do not box).
// At most max keys are held; past that, callers compute values per call,
// and since every key is then in read, a miss costs no lock (keys a client
// chooses, such as IPv6 prefixes, can fill a cache).
type cache[K comparable, V any] struct {
	read   atomic.Pointer[map[K]V]
	full   atomic.Bool // set once read holds max keys; dirty is nil from then on
	mu     sync.Mutex
	dirty  map[K]V // nil, or every key of read and the newer ones; guarded by mu
	misses int     // lookups that passed read since dirty was made; guarded by mu
	max    int
}

// init makes an empty cache of at most max keys.
func (c *cache[K, V]) init(max int) {
	m := map[K]V{}
	c.read.Store(&m)
	c.max = max
}

// load returns the value cached for k.
func (c *cache[K, V]) load(k K) (V, bool) {
	if v, ok := (*c.read.Load())[k]; ok || c.full.Load() {
		return v, ok
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if v, ok := (*c.read.Load())[k]; ok {
		return v, true
	}
	v, ok := c.dirty[k]
	if ok {
		c.missed()
	}
	return v, ok
}

// store caches v for k unless k is cached already or the cache is full, and
// returns the value cached for k (v when none is).
func (c *cache[K, V]) store(k K, v V) V {
	if c.full.Load() {
		if old, ok := (*c.read.Load())[k]; ok {
			return old
		}
		return v
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	read := *c.read.Load()
	if old, ok := read[k]; ok {
		return old
	}
	if old, ok := c.dirty[k]; ok {
		return old
	}
	if c.dirty == nil {
		if len(read) >= c.max {
			c.full.Store(true)
			return v
		}
		c.dirty = make(map[K]V, len(read)+1)
		for rk, rv := range read {
			c.dirty[rk] = rv
		}
	}
	if len(c.dirty) >= c.max {
		d := c.dirty
		c.read.Store(&d)
		c.dirty, c.misses = nil, 0
		c.full.Store(true)
		return v
	}
	c.dirty[k] = v
	c.missed()
	return v
}

// missed counts a lookup that had to pass read and promotes dirty to read
// once the misses have paid for copying it. Called with mu held.
func (c *cache[K, V]) missed() {
	if c.misses++; c.misses < len(c.dirty) {
		return
	}
	d := c.dirty
	c.read.Store(&d)
	c.dirty, c.misses = nil, 0
}
