package clock

import (
	"context"
	"sync"
	"time"
)

// Clock is a monotonic time source.
//
// Now returns the time elapsed since the clock's origin. Sleep blocks for d,
// or until ctx is done, in which case it returns ctx.Err().
type Clock interface {
	Now() time.Duration
	Sleep(ctx context.Context, d time.Duration) error
}

// Fake is a manually driven clock for tests. Its time changes only through
// Advance and Set; sleepers wake when the time reaches their deadline. The
// zero value is not usable: call NewFake.
type Fake struct {
	mu       sync.Mutex
	now      time.Duration
	sleepers map[*sleeper]struct{}
	changed  chan struct{} // closed and replaced whenever the set of sleepers changes
}

type sleeper struct {
	until time.Duration
	wake  chan struct{}
}

// NewFake returns a fake clock reading start.
func NewFake(start time.Duration) *Fake {
	return &Fake{now: start, sleepers: map[*sleeper]struct{}{}, changed: make(chan struct{})}
}

// Now returns the fake time.
func (f *Fake) Now() time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

// Advance moves the time forward by d (backwards when d is negative) and
// wakes the sleepers whose deadline has been reached.
func (f *Fake) Advance(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.setLocked(f.now + d)
}

// Set sets the time to t, which may be earlier than the current time, and
// wakes the sleepers whose deadline has been reached: a test steps through
// a table of timestamps with it.
func (f *Fake) Set(t time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.setLocked(t)
}

func (f *Fake) setLocked(t time.Duration) {
	f.now = t
	for s := range f.sleepers {
		if s.until <= t {
			close(s.wake)
			delete(f.sleepers, s)
		}
	}
	f.notifyLocked()
}

func (f *Fake) notifyLocked() {
	close(f.changed)
	f.changed = make(chan struct{})
}

// Sleep blocks until the fake time has advanced by d or ctx is done.
func (f *Fake) Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	f.mu.Lock()
	s := &sleeper{until: f.now + d, wake: make(chan struct{})}
	f.sleepers[s] = struct{}{}
	f.notifyLocked()
	f.mu.Unlock()
	select {
	case <-s.wake:
		return nil
	case <-ctx.Done():
		f.mu.Lock()
		delete(f.sleepers, s)
		f.notifyLocked()
		f.mu.Unlock()
		return ctx.Err()
	}
}

// WaitForSleepers blocks until at least n goroutines are blocked in Sleep,
// or ctx is done. Tests use it to advance the clock only once the code under
// test waits, without sleeping themselves. Given a ctx already done, it
// does not wait: it returns nil when at least n are blocked now, and
// ctx.Err() otherwise (with n = 1: when none is).
func (f *Fake) WaitForSleepers(ctx context.Context, n int) error {
	for {
		f.mu.Lock()
		if len(f.sleepers) >= n {
			f.mu.Unlock()
			return nil
		}
		ch := f.changed
		f.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
