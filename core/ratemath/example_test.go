package ratemath_test

import (
	"fmt"
	"time"

	"github.com/sluicekit/sluice/core/ratemath"
)

// A sliding counter of 100 per minute, 15 s into its window: 80 requests
// in the window before weigh three quarters, plus the 30 of this one. 10
// more fit at once; 40 more when the previous window's weight is down to
// (100-30-40)/80 of it, 37.5 s in.
func Example() {
	w := int64(time.Minute)
	fmt.Println(ratemath.SlidingEstimate(80, 30, 15*int64(time.Second), w))
	fmt.Println(time.Duration(ratemath.SlidingEarliest(80, 30, 40, 100, float64(w))))
	fmt.Println(ratemath.MulDiv(1<<62, 3, 1<<61)) // no overflow in between
	// Output:
	// 90
	// 37.5s
	// 6
}
