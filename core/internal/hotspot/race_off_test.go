//go:build !race

package hotspot

// raceOn is true when the tests run with the race detector: the largest
// floods are skipped.
const raceOn = false
