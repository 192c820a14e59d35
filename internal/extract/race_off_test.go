//go:build !race

package extract_test

// raceEnabled reports whether the race detector is on: allocation counts
// are not asserted then, since instrumentation changes them.
const raceEnabled = false
