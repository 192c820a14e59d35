package throttle_test

import (
	"fmt"

	"github.com/sluicekit/sluice/core/clock"
	"github.com/sluicekit/sluice/core/throttle"
)

// An upstream that rejects every call gets fewer and fewer of them: the
// client rejects the rest locally.
func Example() {
	th, err := throttle.New(clock.NewFake(0), throttle.WithRandom(func() float64 { return 0.5 }))
	if err != nil {
		fmt.Println(err)
		return
	}
	sent := 0
	for range 100 {
		if th.Allow("GET api.example.com") != nil {
			continue // rejected locally
		}
		sent++
		th.Record("GET api.example.com", false, 0) // the upstream answered 429
	}
	fmt.Println("sent", sent, "of 100")
	// Output:
	// sent 2 of 100
}
