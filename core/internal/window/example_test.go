package window_test

import (
	"fmt"
	"time"

	"github.com/sluicekit/sluice/core/internal/window"
)

// A one-second window of ten 100ms buckets: counts leave the window bucket
// by bucket as time moves on.
func Example() {
	a, err := window.New(10, time.Second)
	if err != nil {
		panic(err)
	}
	ms := int64(time.Millisecond)
	a.Add(50*ms, window.Pass, 3)  // bucket [0, 100ms)
	a.Add(420*ms, window.Pass, 2) // bucket [400ms, 500ms)
	a.Add(430*ms, window.Block, 1)
	a.AddRT(480*ms, int64(12*time.Millisecond), false)

	for _, at := range []int64{999, 1000, 1399, 1400} {
		fmt.Printf("at %4dms: pass %d in the window, %d in its last 600ms\n",
			at, a.Sum(at*ms, window.Pass), a.SumOver(at*ms, 600*time.Millisecond, window.Pass))
	}
	s := a.SnapshotOver(999*ms, time.Second)
	fmt.Printf("snapshot at 999ms: pass %d, block %d, complete %d, min RT %s\n",
		s.Pass, s.Block, s.Complete, time.Duration(s.MinRT))
	// Output:
	// at  999ms: pass 5 in the window, 2 in its last 600ms
	// at 1000ms: pass 2 in the window, 0 in its last 600ms
	// at 1399ms: pass 2 in the window, 0 in its last 600ms
	// at 1400ms: pass 0 in the window, 0 in its last 600ms
	// snapshot at 999ms: pass 5, block 1, complete 1, min RT 12ms
}
