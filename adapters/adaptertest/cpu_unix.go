//go:build unix

package adaptertest

import (
	"syscall"
	"time"
)

// processCPU returns the CPU time the process has used so far (user and
// system, every thread: the garbage collector's work too), and whether it
// could be read.
func processCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
