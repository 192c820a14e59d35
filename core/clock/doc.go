// Package clock provides the time source of a sluice Guard: the Clock it
// reads once per decision (by default the system's monotonic clock, which
// Guard.Clock returns), and a fake clock for tests (core.WithClock).
//
// Times are durations since an arbitrary origin fixed when the clock is made.
// They only ever go forward on the system clock; a fake clock may be set
// backwards, and every sluice algorithm tolerates that without dropping counts
// or letting a limit be bypassed.
package clock
