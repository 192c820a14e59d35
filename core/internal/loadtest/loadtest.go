// Package loadtest is what tests of promises under load share: Saturate
// keeps the CPUs busy for tests that check a promise on a
// busy host, and Events is the event queue of fake-clock simulations of
// overload.
package loadtest

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
)

// Saturate keeps perCPU spinning goroutines per CPU (GOMAXPROCS) busy until
// t ends, so that every other goroutine, the code under test's included,
// waits for a CPU.
func Saturate(t testing.TB, perCPU int) {
	var stop atomic.Bool
	var wg sync.WaitGroup
	for range perCPU * runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for x := 0; !stop.Load(); x++ {
				_ = x * x
			}
		})
	}
	t.Cleanup(func() {
		stop.Store(true)
		wg.Wait()
	})
}
