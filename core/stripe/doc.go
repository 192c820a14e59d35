// Package stripe spreads counters that every request writes over several
// cache lines, one per CPU, so that requests on different CPUs do not move
// the same line between them. Go has no cheap way to ask which CPU a
// goroutine runs on; a Picker gives one of a small set of indexes that
// stays the same for the goroutines of one processor (P) and differs
// between processors. The Guard's limiters and package redisstore's
// approximate limits use it, with the sizes of the leases of a shared quota
// that a CPU may keep (LeaseSize): only speed depends on the stripe picked,
// never what a limit admits.
//
// A pick costs a sync.Pool get and put: about 6 ns of a flow rule's 73
// cpu-ns pass on the project's 2-CPU VM (core/internal/peerbench's
// README, "Where a pass goes"). With one stripe (GOMAXPROCS 1) Pick
// answers 0 without the pool: 68 against 74 cpu-ns with
// `go -C core/internal/peerbench test -run '^$' -bench PassSluiceFlow/serial -cpu 1 .`.
package stripe
