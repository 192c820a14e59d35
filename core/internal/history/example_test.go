package history_test

import (
	"fmt"

	"github.com/sluicekit/sluice/core/internal/history"
)

func ExampleRing() {
	r, _ := history.New(3, 2) // 3 samples of 2 columns
	for step := int64(1); step <= 4; step++ {
		r.Put(step, []float32{float32(step), float32(10 * step)})
	}
	fmt.Println(r.Column(nil, 0, 0), r.Column(nil, 1, 3))
	// Output: [2 3 4] [30 40]
}
