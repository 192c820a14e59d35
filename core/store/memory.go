package store

import (
	"context"
	"fmt"
	"sync"

	"github.com/sluicekit/sluice/core/clock"
	"github.com/sluicekit/sluice/core/internal/flow"
)

// defaultMemoryKeys is the default bound on the number of keys a memory
// store keeps.
const defaultMemoryKeys = 100000

// memory is the Store of NewMemory.
type memory struct {
	clock clock.Clock
	max   int

	mu   sync.Mutex
	lims map[string]memLimit
}

type memLimit struct {
	lim Limit
	l   flow.Limiter
}

// NewMemory returns a Store in the process's memory, on clock c: limits are
// shared by the Guards of one process. It keeps at most maxKeys keys
// (100000 when maxKeys is 0); beyond, a new key replaces an arbitrary one,
// which then starts afresh. Approximate limits are decided exactly. Close
// does nothing: the store has no goroutine. It is the reference the Redis
// store's behaviour is tested against.
func NewMemory(c clock.Clock, maxKeys int) (Store, error) {
	switch {
	case c == nil:
		return nil, fmt.Errorf("store.NewMemory: clock is nil")
	case maxKeys < 0:
		return nil, fmt.Errorf("store.NewMemory: maxKeys must be >= 0, got %d", maxKeys)
	case maxKeys == 0:
		maxKeys = defaultMemoryKeys
	}
	return &memory{clock: c, max: maxKeys, lims: map[string]memLimit{}}, nil
}

// limiter returns the flow limiter of key for lim, making it (or remaking
// it, carrying its state over, when lim changed) as needed.
func (m *memory) limiter(key string, lim Limit) (flow.Limiter, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.lims[key]
	if ok && e.lim == lim {
		return e.l, nil
	}
	if err := lim.Validate(); err != nil {
		return nil, err
	}
	l, err := flow.Reload(flow.Config{Algorithm: flow.Algorithm(lim.Algorithm), Limit: lim.Limit, Window: lim.Window, Burst: lim.Burst, MaxWait: lim.MaxWait}, e.l, int64(m.clock.Now()))
	if err != nil {
		return nil, err
	}
	if !ok && len(m.lims) >= m.max {
		for k := range m.lims {
			delete(m.lims, k)
			break
		}
	}
	m.lims[key] = memLimit{lim: lim, l: l}
	return l, nil
}

// Take decides n requests of key under lim.
func (m *memory) Take(ctx context.Context, key string, lim Limit, n int64) (Decision, error) {
	l, err := m.limiter(key, lim)
	if err != nil {
		return Decision{}, err
	}
	f := l.Acquire(int64(m.clock.Now()), n)
	var d Decision
	d.setFlow(&f)
	return d, nil
}

// Undo gives back an admitted decision of Take.
func (m *memory) Undo(ctx context.Context, key string, lim Limit, d Decision, n int64) error {
	m.mu.Lock()
	e, ok := m.lims[key]
	m.mu.Unlock()
	if ok {
		e.l.Undo(d.flow(), n)
	}
	return nil
}

// Close does nothing: the store has no goroutine.
func (m *memory) Close() error { return nil }
