package store

import (
	"container/heap"
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/sluicekit/sluice/core/clock"
	"github.com/sluicekit/sluice/core/internal/flow"
	"github.com/sluicekit/sluice/core/internal/window"
	"github.com/sluicekit/sluice/core/ratemath"
)

const defaultMemoryKeys = 100000 // NewMemory's default maxKeys

// memory is the Store of NewMemory.
type memory struct {
	clock clock.Clock
	max   int

	mu      sync.RWMutex // read by each decision: evict never drops a limit one counts in
	lims    map[string]*memLimit
	byUntil untilHeap // every key, by an until at or before its own
}

type memLimit struct {
	lim   Limit
	l     flow.Limiter
	until atomic.Int64 // from when no admission counts: the state is full again
}

// NewMemory returns a Store in the process's memory, on clock c: limits are
// shared by the Guards of one process. It keeps at most maxKeys keys
// (100000 when maxKeys is 0): about 300 bytes each for a sliding counter,
// 480 for a bucket, with 12-byte keys (30 and 48MB at the default). A new
// key beyond replaces a key whose limit is back to full (a sliding
// counter's two windows over, a bucket refilled); when every key's
// admissions still count, Take fails for the new key with an error
// wrapping ErrKeyUnavailable, on which a Guard applies the rule's failure
// policy to that request: a flood of keys never resets what a key admitted.
// Approximate limits are decided exactly. Close does nothing: the store has
// no goroutine. It is the reference the Redis store's behaviour is tested
// against.
func NewMemory(c clock.Clock, maxKeys int) (Store, error) {
	switch {
	case c == nil:
		return nil, fmt.Errorf("store.NewMemory: clock is nil")
	case maxKeys < 0:
		return nil, fmt.Errorf("store.NewMemory: maxKeys must be >= 0, got %d", maxKeys)
	case maxKeys == 0:
		maxKeys = defaultMemoryKeys
	}
	return &memory{clock: c, max: maxKeys, lims: map[string]*memLimit{}}, nil
}

// limiter returns the limit of key for lim at now, making it (or remaking
// it, carrying its state over, when lim changed) as needed. Under m.mu.
func (m *memory) limiter(key string, lim Limit, now int64) (*memLimit, error) {
	e, ok := m.lims[key]
	if ok && e.lim == lim {
		return e, nil
	}
	if err := lim.Validate(); err != nil {
		return nil, err
	}
	ne := &memLimit{lim: lim}
	switch {
	case !ok && len(m.lims) >= m.max && !m.evict(now):
		return nil, fmt.Errorf("store.NewMemory: %w: %w: all %d keys hold admissions that still count", ErrUnavailable, ErrKeyUnavailable, m.max)
	case !ok:
		e = ne
	case e.until.Load() > now: // the state carried over is full again when a full one would be
		ne.until.Store(max(e.until.Load(), now+lim.span()))
	}
	var err error
	if ne.l, err = flow.Reload(flow.Config{Algorithm: flow.Algorithm(lim.Algorithm), Limit: lim.Limit, Window: lim.Window, Burst: lim.Burst, MaxWait: lim.MaxWait}, e.l, now); err != nil {
		return nil, err
	}
	if !ok {
		heap.Push(&m.byUntil, untilKey{key: key})
	}
	m.lims[key] = ne
	return ne, nil
}

// evict forgets a key whose limit is full again at now, if any. Under m.mu.
func (m *memory) evict(now int64) bool {
	for len(m.byUntil) > 0 {
		k := &m.byUntil[0]
		if k.until > now {
			return false // every key's until is later
		}
		if u := m.lims[k.key].until.Load(); u > now {
			k.until = u // admitted since it was pushed
			heap.Fix(&m.byUntil, 0)
			continue
		}
		delete(m.lims, k.key)
		heap.Pop(&m.byUntil)
		return true
	}
	return false
}

// span is the longest an admission of lim counts: two windows of a
// sliding counter; a bucket's refill from empty plus a leaky bucket's wait.
func (l Limit) span() int64 {
	if l.Algorithm == SlidingCounter {
		return 2 * int64(l.Window)
	}
	return min(ratemath.MulDiv(int64(l.Window), l.Limit+l.Burst+1, l.Limit), 1<<60) + int64(l.MaxWait)
}

// admitted records n requests admitted at now.
func (e *memLimit) admitted(now, n int64) {
	w := int64(e.lim.Window)
	u := window.Floor(now, w) + 2*w
	if e.lim.Algorithm != SlidingCounter { // the TAT moves on by n costs, from now or from itself
		cost := ratemath.MulDiv(n, w, e.lim.Limit)
		if w%e.lim.Limit != 0 {
			cost++
		}
		u = min(max(e.until.Load(), now)+cost, now+e.lim.span())
	}
	for old := e.until.Load(); old < u && !e.until.CompareAndSwap(old, u); old = e.until.Load() {
	}
}

// untilHeap is a min-heap of keys by until (container/heap).
type untilHeap []untilKey

type untilKey struct {
	until int64
	key   string
}

func (h untilHeap) Len() int           { return len(h) }
func (h untilHeap) Less(i, j int) bool { return h[i].until < h[j].until }
func (h untilHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *untilHeap) Push(x any)        { *h = append(*h, x.(untilKey)) }
func (h *untilHeap) Pop() any          { x := (*h)[len(*h)-1]; *h = (*h)[:len(*h)-1]; return x }

// Take decides n requests of key under lim.
func (m *memory) Take(ctx context.Context, key string, lim Limit, n int64) (Decision, error) {
	now := int64(m.clock.Now())
	m.mu.RLock()
	e := m.lims[key]
	if e == nil || e.lim != lim {
		m.mu.RUnlock()
		m.mu.Lock()
		defer m.mu.Unlock()
		var err error
		if e, err = m.limiter(key, lim, now); err != nil {
			return Decision{}, err
		}
	} else {
		defer m.mu.RUnlock()
	}
	f := e.l.Acquire(now, n)
	if f.OK {
		e.admitted(now, n)
	}
	var d Decision
	d.setFlow(&f)
	return d, nil
}

// Undo gives back an admitted decision of Take.
func (m *memory) Undo(ctx context.Context, key string, lim Limit, d Decision, n int64) error {
	m.mu.RLock()
	e, ok := m.lims[key]
	m.mu.RUnlock()
	if ok {
		e.l.Undo(d.flow(), n)
	}
	return nil
}

// Close does nothing: the store has no goroutine.
func (m *memory) Close() error { return nil }
