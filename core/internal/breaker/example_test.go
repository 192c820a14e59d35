package breaker_test

import (
	"fmt"
	"time"

	"github.com/sluicekit/sluice/core/internal/breaker"
)

func Example() {
	b, err := breaker.New(breaker.Config{
		Strategy:    breaker.ErrorRatio,
		Threshold:   0.5, // trip when half the requests fail
		MinRequests: 4,   // ... of at least 4 in the window
		Window:      10 * time.Second,
		OpenFor:     5 * time.Second,
	}, nil, func(t breaker.Transition) {
		fmt.Printf("%s -> %s: %s\n", t.From, t.To, t.Reason)
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	sec := int64(time.Second)
	for i, failed := range []bool{false, true, false, true} {
		t, _, _ := b.Allow(int64(i) * sec)
		b.DoneOn(0, int64(i)*sec, t, 20*time.Millisecond, failed)
	}
	_, retry, ok := b.Allow(4 * sec)
	fmt.Println("allowed:", ok, "retry after:", retry)

	t, _, ok := b.Allow(8 * sec) // open for 5s from 3s: a probe
	fmt.Println("allowed:", ok, "probe:", t.Probe())
	b.DoneOn(0, 8*sec, t, 20*time.Millisecond, false)
	fmt.Println(b.Stats(8 * sec).State)
	// Output:
	// closed -> open: error ratio 0.5 >= 0.5 of 4 requests in 10s
	// allowed: false retry after: 4s
	// open -> half-open: open for 5s
	// allowed: true probe: true
	// half-open -> closed: 1 of 1 probes succeeded
	// closed
}
