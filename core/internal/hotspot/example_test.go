package hotspot_test

import (
	"fmt"
	"time"

	"github.com/sluicekit/sluice/core/internal/hotspot"
)

// Each user may make 2 requests per second with a burst of 1; the user vip
// may make 100, and the user abuser none. Times are nanoseconds of the
// Guard's clock; here they come from a table.
func ExampleNew() {
	l, err := hotspot.New(hotspot.Config{
		Limit:     2,
		Window:    time.Second,
		Burst:     1,
		Overrides: map[string]int64{"vip": 100, "abuser": 0},
	}, nil)
	if err != nil {
		panic(err)
	}
	for _, r := range []struct {
		at   time.Duration
		user string
	}{
		{0, "alice"}, {0, "alice"}, {0, "alice"}, {0, "alice"},
		{0, "bob"}, {0, "vip"}, {0, "abuser"},
		{500 * time.Millisecond, "alice"},
	} {
		d := l.Acquire(int64(r.at), r.user, 1)
		if d.OK {
			fmt.Printf("%-5s %-6s admitted, %d left\n", r.at, r.user, d.Remaining)
		} else {
			fmt.Printf("%-5s %-6s rejected, retry after %s\n", r.at, r.user, d.RetryAfter)
		}
	}
	fmt.Println(l.Len(), "users tracked")
	// Output:
	// 0s    alice  admitted, 2 left
	// 0s    alice  admitted, 1 left
	// 0s    alice  admitted, 0 left
	// 0s    alice  rejected, retry after 500ms
	// 0s    bob    admitted, 2 left
	// 0s    vip    admitted, 100 left
	// 0s    abuser rejected, retry after 1s
	// 500ms alice  admitted, 0 left
	// 3 users tracked
}

// A leaky bucket paces each tenant to one request per 100ms: a request
// whose turn is at most 250ms away is admitted with the time to wait for
// it.
func ExampleLimiter_Acquire_leakyBucket() {
	l, err := hotspot.New(hotspot.Config{
		Algorithm: hotspot.LeakyBucket,
		Limit:     10,
		Window:    time.Second,
		MaxWait:   250 * time.Millisecond,
	}, nil)
	if err != nil {
		panic(err)
	}
	for range 5 {
		d := l.Acquire(0, "tenant-a", 1)
		fmt.Println(d.OK, d.Wait, d.RetryAfter)
	}
	// Output:
	// true 0s 0s
	// true 100ms 0s
	// true 200ms 0s
	// false 0s 50ms
	// false 0s 50ms
}

// A concurrency limit per client IP: Release, called when the request ends,
// frees the slot.
func ExampleLimiter_Release() {
	l, err := hotspot.New(hotspot.Config{Algorithm: hotspot.Concurrency, Limit: 2}, nil)
	if err != nil {
		panic(err)
	}
	a := l.Acquire(0, "10.0.0.7", 1)
	b := l.Acquire(0, "10.0.0.7", 1)
	fmt.Println(a.OK, b.OK, l.Acquire(0, "10.0.0.7", 1).OK)
	l.Release(a.Hold(), 1)
	fmt.Println(l.Acquire(0, "10.0.0.7", 1).OK)
	// Output:
	// true true false
	// true
}
