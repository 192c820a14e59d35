// Package sysclock is the system clock of package clock, apart so that
// core's workers tell it from other clocks (a *System is the real time).
package sysclock

import (
	"context"
	"time"
)

// System is the clock clock.NewSystem makes: the time since Origin.
type System struct {
	Origin time.Time
}

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
