package benchtable_test

import (
	"fmt"

	"github.com/sluicekit/sluice/core/internal/peerbench/benchtable"
)

// A command runs each benchmark once a round (benchtable.Run, which
// parses what Parse does), then prints each figure's median and each
// ratio's median and range over the rounds.
func Example() {
	rounds := []benchtable.Result{
		benchtable.Parse("BenchmarkRedisVsPing", []byte("BenchmarkRedisVsPing-2 1000 150000 ns/op 1.20 sluice-token-bucket/ping\n")),
		benchtable.Parse("BenchmarkRedisVsPing", []byte("BenchmarkRedisVsPing-2 1000 170000 ns/op 1.10 sluice-token-bucket/ping\n")),
		benchtable.Parse("BenchmarkRedisVsPing", []byte("BenchmarkRedisVsPing-2 1000 160000 ns/op 1.30 sluice-token-bucket/ping\n")),
	}
	fmt.Println(benchtable.Format(benchtable.Median(benchtable.Values(rounds, "", "ns/op"))), "ns/op")
	fmt.Println(benchtable.Ratio(benchtable.Values(rounds, "", "sluice-token-bucket/ping")))
	// Output:
	// 160000 ns/op
	// **1.20** (1.10-1.30)
}
