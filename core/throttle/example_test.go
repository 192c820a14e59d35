package throttle_test

import (
	"fmt"
	"time"

	"github.com/sluicekit/sluice/core/clock"
	"github.com/sluicekit/sluice/core/throttle"
)

// An upstream that rejects every call gets fewer and fewer of them: the
// client rejects the rest locally. One that says when to retry gets none
// until then.
func Example() {
	c := clock.NewFake(0) // a Guard's clock in a program: guard.Clock()
	th, err := throttle.New(c)
	if err != nil {
		fmt.Println(err)
		return
	}
	const api = "GET api.example.com"
	sent := 0
	for range 1000 {
		if th.Allow(api) != nil {
			continue // rejected locally
		}
		sent++
		th.Record(api, false, 0) // the upstream answered 429
	}
	// The share of calls rejected grows with the calls counted: a call
	// goes each time the shares let through add up to one, 4 or 5 of 1000.
	fmt.Println("sent fewer than 50 of 1000:", sent < 50)

	c.Advance(2 * time.Minute) // the window: the rejections are forgotten
	if th.Allow(api) == nil {
		th.Record(api, false, 30*time.Second) // 503 with Retry-After: 30
	}
	c.Advance(10 * time.Second)
	fmt.Println(th.Allow(api))
	// Output:
	// sent fewer than 50 of 1000: true
	// sluice: GET api.example.com throttled by the client: the upstream asked to retry after 20s
}
