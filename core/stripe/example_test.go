package stripe_test

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/sluicekit/sluice/core/stripe"
)

// paddedCount is a count on a cache line of its own.
type paddedCount struct {
	n atomic.Int64
	_ [56]byte
}

// A counter that goroutines on every CPU add to, one stripe per CPU; its
// value is the sum of the stripes.
func Example() {
	p := stripe.NewPicker()
	counts := make([]paddedCount, stripe.Count())
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 1000 {
				counts[stripe.Of(p.Pick(), len(counts))].n.Add(1)
			}
		})
	}
	wg.Wait()
	var sum int64
	for i := range counts {
		sum += counts[i].n.Load()
	}
	fmt.Println(sum)
	// Output: 8000
}
