//go:build unix

package hotspot

import (
	"syscall"
	"time"
)

// processCPU returns the CPU time the process used so far (user and
// system, every thread), or -1 when it cannot be read.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return -1
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
