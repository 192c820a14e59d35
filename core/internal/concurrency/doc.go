// Package concurrency implements in-flight limits: at most Limit requests of
// a resource between Enter and Exit at any moment.
//
// A Limiter counts the slots taken in one shared counter, reserving first
// and checking after, so the limit is never exceeded. With a limit of at
// least stripe.MinLeased (2048 per CPU) and at least that many slots not
// taken, each CPU also keeps up to 64 free slots of its own: AcquireOn
// takes from them, and ReleaseOn gives back to them, without writing the
// shared counter, a cache line every CPU would otherwise move. The free
// slots count as taken, so the limit still holds; while a CPU keeps them,
// the other CPUs may be refused up to 64 slots per CPU early, at most 1/32
// of the limit. With fewer slots left, releases go back to the shared
// counter and no CPU takes more.
//
// The package is internal to core: a concurrency rule is a core.Rule of
// core.KindConcurrency.
package concurrency
