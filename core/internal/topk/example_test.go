package topk_test

import (
	"fmt"

	"github.com/sluicekit/sluice/core/internal/topk"
)

func ExampleSketch() {
	a, _ := topk.New(2)
	b, _ := topk.New(2)
	a.Add("alice", 5)
	a.Add("bob", 1)
	a.Add("carol", 2) // takes bob's counter: its count from 1, with 1 as its error
	b.Add("alice", 1)
	fmt.Println(topk.Merge(b.Top(a.Top(nil)), 2))
	// Output: [{alice 6 0} {carol 3 1}]
}
