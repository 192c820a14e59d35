package priority_test

import (
	"fmt"

	"github.com/sluicekit/sluice/core/internal/priority"
)

func ExampleTracker_Reserve() {
	t := priority.New(nil)
	t.Admitted(0, priority.Critical, 5) // 5 critical requests in flight
	t.Done(priority.Critical, 2)        // 3 now, 5 at the peak
	// Default requests leave critical ones 2 beyond their 3, plus 10% of
	// the limit of 20.
	fmt.Println(t.Reserve(0, priority.Default, 20), t.Reserve(0, priority.Critical, 20))
	// Output: 4 0
}
