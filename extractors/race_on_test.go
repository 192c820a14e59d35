//go:build race

package extractors_test

// raceEnabled reports whether the race detector is on: allocation counts
// are not asserted then, since instrumentation changes them.
const raceEnabled = true
