// Package window implements the atomic leap array: sliding-window statistics
// kept in a fixed ring of time buckets (Sentinel's LeapArray).
//
// A LeapArray covering an interval of n buckets maps a time t to the slot
// (t/bucketLen) % n, whose bucket starts at t - t%bucketLen. A slot holding a
// bucket from an earlier round is replaced lazily by the first writer that
// sees it, with one compare-and-swap of an atomic.Pointer: the add path takes
// no lock and never waits for another goroutine.
//
// Time as seen by a LeapArray never goes backwards: a reading earlier than the
// newest bucket (a clock stepped back, a goroutine that was descheduled) is
// counted in the newest bucket instead of being dropped, and sums are taken
// relative to it, so a clock step can neither lose counts nor open a gap in a
// limit.
//
// The package is internal to core: flow rules, breakers and the Guard's
// statistics count in it.
package window
