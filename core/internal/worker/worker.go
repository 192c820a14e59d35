package worker

import (
	"context"
	"sync"
	"time"

	"github.com/sluicekit/sluice/core/clock"
	"github.com/sluicekit/sluice/core/internal/sysclock"
)

// Poll is the longest Sleep waits before its caller reads a clock other
// than the system's again: sleeping on that clock would add a sleeper that a
// test on a clock.Fake, counting the sleepers of its own code
// (WaitForSleepers), does not expect.
const Poll = 100 * time.Millisecond

// Worker owns at most one goroutine at a time. Its zero value is ready.
type Worker struct {
	mu     sync.Mutex
	cancel context.CancelFunc // of the goroutine started last; nil: none
	wg     sync.WaitGroup
	closed bool
}

// Go runs f in a goroutine, unless one started by the Worker is still owned
// (until Stop) or the Worker is closed; it reports whether it started one.
// f must return soon after its context ends.
func (w *Worker) Go(f func(ctx context.Context)) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.cancel != nil || w.closed {
		return false
	}
	w.start(f)
	return true
}

// Restart ends the goroutine's context, without waiting for it, and runs f
// in a new one unless the Worker is closed.
func (w *Worker) Restart(f func(ctx context.Context)) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.cancelLocked()
	if !w.closed {
		w.start(f)
	}
}

// start runs f in a goroutine. w.mu is held.
func (w *Worker) start(f func(ctx context.Context)) {
	ctx, cancel := context.WithCancel(context.Background())
	w.cancel = cancel
	w.wg.Go(func() { f(ctx) })
}

// cancelLocked ends the goroutine's context. w.mu is held.
func (w *Worker) cancelLocked() {
	if w.cancel != nil {
		w.cancel()
		w.cancel = nil
	}
}

// Stop ends the goroutine's context and waits for every goroutine the
// Worker started; Go may start another afterwards.
func (w *Worker) Stop() {
	w.mu.Lock()
	w.cancelLocked()
	w.mu.Unlock()
	w.Wait()
}

// Wait waits for every goroutine the Worker started to return.
func (w *Worker) Wait() { w.wg.Wait() }

// Close stops the Worker for good: it stops the goroutine, and Go and
// Restart start none after it. It is idempotent.
func (w *Worker) Close() {
	w.mu.Lock()
	w.closed = true
	w.mu.Unlock()
	w.Stop()
}

// Sleep waits d, at most Poll when c is not the system clock, and reports
// false when ctx ended first.
func Sleep(ctx context.Context, c clock.Clock, d time.Duration) bool {
	if _, real := c.(*sysclock.System); !real {
		d = min(d, Poll)
	}
	return (&sysclock.System{}).Sleep(ctx, d) == nil
}
