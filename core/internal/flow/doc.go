// Package flow implements the request-rate algorithms of sluice flow rules.
//
// Every algorithm admits atomically: with any number of goroutines, the number
// admitted in a window never exceeds what the algorithm's definition promises,
// because a Limiter reserves first, checks, and undoes a reservation that does
// not fit. No algorithm spins or waits for a lock held across a decision, and
// none drops a count or lets more through when the clock steps backwards:
// time as seen by a Limiter never goes back, an earlier reading is treated as
// the latest one seen (or, by the buckets, as one that has seen less refill).
// A RetryAfter is measured on the caller's clock. An admitted decision
// that leaves no quota tells, as Next, the RetryAfter of a request of one
// rejected right after it, exactly, with every algorithm, so that the last
// admitted response and the next rejection advertise the same wait
// (TestNextIsTheNextRetry, TestWindowNextIsTheNextRetry:
// go test -run NextIsTheNextRetry ./core/internal/flow).
//
// The algorithms, their cost per decision and their accuracy:
//
//   - LeapArray: a ring of Buckets time buckets (package window). Lock-free;
//     one atomic add plus a sum over Buckets buckets, done again when a
//     bucket boundary passes during the decision. Any window aligned to a
//     bucket boundary admits at most Limit; an unaligned window may see up to
//     one bucket's worth more. Retry-after is exact at bucket resolution.
//     While much of the quota is left, requests on different CPUs do not
//     write the bucket's count (a cache line every CPU would move) but
//     admit from leases (AcquireTo with a CPU): a CPU takes up to 64
//     permits at once, at most 1/256 of the quota left shared among the
//     CPUs, counted in the current bucket and usable only while that bucket
//     is current; what a lease has left goes back to its bucket when the
//     CPU takes the next one. Nothing passes beyond the limit: the leases' permits are in the
//     window's count. Remaining is exact on one CPU and may read lower by
//     what other CPUs' leases still hold. Limits that warm up do not lease.
//   - FixedWindow: one counter per aligned window. Cheapest (one atomic add);
//     up to 2x Limit can pass around a window boundary.
//   - SlidingLog: the timestamps of the admitted requests of the last window.
//     Exact for every window; a small mutex per decision and 8 bytes per
//     request of Limit (Limit is capped at MaxSlidingLogLimit).
//   - SlidingCounter: the previous window weighted by its overlap with the
//     sliding window, plus the current one (prev*(window-elapsed)/window +
//     curr). Lock-free, two counters; an approximation that assumes the
//     previous window's requests were spread evenly.
//   - TokenBucket: tokens refill continuously at Limit per Window up to
//     Limit+Burst. One int64 state (the time the bucket will be full again)
//     updated by one compare-and-swap; no refill step, no second cache.
//   - LeakyBucket: pacing. Each request is given the slot Window/Limit after
//     the previous one and waits for it when it lies within MaxWait, else it
//     is rejected. Same one-CAS state as TokenBucket, in nanoseconds, so
//     limits above 1000 per second pace correctly. A waiter that gives up
//     (Undo) gives its slot back: the state moves back when it was the last
//     slot, else the slot is kept as a hole (up to 1024 of them per rule,
//     adjacent ones merged) that the next request takes when it is the
//     earliest free time ahead, so nobody waits for a request that left.
//     Holes are read under a mutex, only by requests that wait anyway.
//
// Both buckets are exact: a request costs Window/Limit, kept as whole
// nanoseconds plus a fraction in units of 1/Limit ns, so 3 per second or
// 6e8 per second is honoured to the request; waits and retry hints are
// rounded up to the nanosecond, never early. When Window is a multiple of
// Limit (1000 per second, 10 per minute) the fraction is always zero and a
// decision is one compare-and-swap; otherwise, and while a limit warms up,
// decisions hold a small mutex (warming limits round each cost up to a
// unit of 1/Limit ns).
//
// Numbers are honoured exactly or refused by Config.Validate: Limit at most
// MaxLimit (2^52), at most one request per nanosecond for the buckets, and
// every span a limiter adds to now (Window, MaxWait, a token bucket's
// Window+Burst*Window/Limit) at most MaxSpan (2^52 ns, about 52 days); a
// request of n larger than the limit is rejected without being counted.
//
// All times are nanoseconds from the Guard's clock (package clock).
//
// The package is internal to core: a rule names its algorithm with
// core.Algorithm, and package store (with redisstore) shares its arithmetic.
package flow
