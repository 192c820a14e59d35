// Package stripe spreads counters that every request writes over several
// cache lines, one per CPU, so that requests on different CPUs do not move
// the same line between them. Go has no cheap way to ask which CPU a
// goroutine runs on; a Picker gives one of a small set of indexes that
// stays the same for the goroutines of one processor (P) and differs
// between processors. The Guard's limiters and package redisstore's
// approximate limits use it, with the sizes of the leases of a shared quota
// that a CPU may keep (LeaseSize): only speed depends on the stripe picked,
// never what a limit admits.
package stripe
