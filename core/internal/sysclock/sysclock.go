// Package sysclock is the system clock, the Clock (see package clock) of a
// Guard not given one, apart so that core's workers tell it from other
// clocks (a *System is the real time).
package sysclock

import (
	"context"
	"time"
)

// System is the real monotonic clock: the time since Origin.
type System struct {
	Origin time.Time
}

// New returns the real monotonic clock, whose origin is the moment of the
// call. Its Now costs one monotonic clock reading (time.Since on a time
// carrying a monotonic reading); it is not affected by changes of the wall
// clock.
func New() *System { return &System{Origin: time.Now()} }

// Now returns the time since Origin.
func (s *System) Now() time.Duration { return time.Since(s.Origin) }

// Sleep waits d or until ctx is done.
func (s *System) Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
