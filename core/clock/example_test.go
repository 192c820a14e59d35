package clock_test

import (
	"context"
	"fmt"
	"time"

	"github.com/sluicekit/sluice/core/clock"
)

// A test drives code that sleeps without sleeping itself: it waits until the
// code blocks in Sleep, then moves the fake time past the deadline.
func ExampleFake() {
	f := clock.NewFake(0)
	done := make(chan time.Duration)
	go func() {
		_ = f.Sleep(context.Background(), 250*time.Millisecond)
		done <- f.Now()
	}()

	_ = f.WaitForSleepers(context.Background(), 1)
	f.Advance(100 * time.Millisecond)
	select {
	case <-done:
		fmt.Println("woke too early")
	default:
		fmt.Println("asleep at 100ms")
	}
	f.Advance(150 * time.Millisecond)
	fmt.Println("woke at", <-done)
	// Output:
	// asleep at 100ms
	// woke at 250ms
}
