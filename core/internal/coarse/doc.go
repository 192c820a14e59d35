// Package coarse provides the clock a Guard on the system clock times
// requests on: one atomic load a reading, a millisecond behind at most while
// the process is not starved.
package coarse
