// Package clock provides the time source of a sluice Guard: the Clock it
// reads once per decision (by default the system's monotonic clock, which
// Guard.Clock returns), and a fake clock for tests (core.WithClock).
//
// Times are durations since an arbitrary origin fixed when the clock is made.
// They only ever go forward on the system clock; a fake clock may be set
// backwards, which the Guard tolerates (see "Time" in package core).
//
// A Fake drives a Guard in tests instead of sleeping: Advance and Set move
// its time, and WaitForSleepers waits until the Guard's goroutines sleep on
// it, so that a test is a table of timestamps:
//
//	fc := clock.NewFake(0)
//	guard, err := core.New(core.WithClock(fc), core.WithRules(rules...))
//	fc.Advance(time.Second) // the next window
package clock
