package flow_test

import (
	"fmt"
	"time"

	"github.com/sluicekit/sluice/core/internal/flow"
)

// A token bucket of 2 requests per second with a burst of 1: it starts full
// with 3 tokens and refills one every 500ms. Times are nanoseconds of the
// Guard's clock; here they come from a table.
func ExampleNew() {
	l, err := flow.New(flow.Config{Algorithm: flow.TokenBucket, Limit: 2, Window: time.Second, Burst: 1}, nil)
	if err != nil {
		panic(err)
	}
	for _, at := range []time.Duration{0, 0, 0, 0, 200 * time.Millisecond, 500 * time.Millisecond, 3 * time.Second} {
		d := l.Acquire(int64(at), 1)
		if d.OK {
			fmt.Printf("%-6s admitted, %d left\n", at, d.Remaining)
		} else {
			fmt.Printf("%-6s rejected, retry after %s\n", at, d.RetryAfter)
		}
	}
	// Output:
	// 0s     admitted, 2 left
	// 0s     admitted, 1 left
	// 0s     admitted, 0 left
	// 0s     rejected, retry after 500ms
	// 200ms  rejected, retry after 300ms
	// 500ms  admitted, 0 left
	// 3s     admitted, 2 left
}

// Validate reports every problem of a configuration, naming the field as the
// rules file does.
func ExampleConfig_Validate() {
	cfg := flow.Config{Algorithm: flow.FixedWindow, Limit: -5, Burst: 3}
	for _, e := range cfg.Validate() {
		fmt.Println(e)
	}
	// Output:
	// limit must be >= 0, got -5
	// burst only applies to algorithm token-bucket, got 3 with fixed-window
}
