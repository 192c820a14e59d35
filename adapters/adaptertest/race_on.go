//go:build race

package adaptertest

// RaceEnabled reports whether the race detector is on: allocation counts
// are not asserted then, since instrumentation changes them.
const RaceEnabled = true
