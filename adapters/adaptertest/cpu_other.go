//go:build !unix

package adaptertest

import "time"

// processCPU reports that the process's CPU time cannot be read here.
func processCPU() (time.Duration, bool) { return 0, false }
