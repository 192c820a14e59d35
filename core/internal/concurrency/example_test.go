package concurrency_test

import (
	"fmt"

	"github.com/sluicekit/sluice/core/internal/concurrency"
)

// A limit of two requests in flight: the third waits for a release.
func ExampleLimiter() {
	l := concurrency.New(2, nil)
	for i := 1; i <= 3; i++ {
		ok := l.AcquireOn(0, 1)
		fmt.Printf("request %d: admitted %v, %d in flight\n", i, ok, l.InFlight())
	}
	l.ReleaseOn(0, 1)
	fmt.Println("after a release:", l.AcquireOn(0, 1))
	// Output:
	// request 1: admitted true, 1 in flight
	// request 2: admitted true, 2 in flight
	// request 3: admitted false, 2 in flight
	// after a release: true
}

// AcquireOn and ReleaseOn take the caller's CPU: with a large limit each
// CPU keeps a few free slots of its own, which still count against the
// limit, so InFlight reports the requests, not the slots kept.
func ExampleLimiter_AcquireOn() {
	l := concurrency.New(1_000_000, nil)
	const cpu = 0
	l.AcquireOn(cpu, 1)
	l.AcquireOn(cpu, 1)
	fmt.Println("in flight:", l.InFlight())
	l.ReleaseOn(cpu, 2)
	fmt.Println("in flight:", l.InFlight())
	// Output:
	// in flight: 2
	// in flight: 0
}
