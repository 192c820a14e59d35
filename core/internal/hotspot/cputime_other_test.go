//go:build !unix

package hotspot

import "time"

// processCPU returns -1: the benchmarks report no CPU time here.
func processCPU() time.Duration { return -1 }
