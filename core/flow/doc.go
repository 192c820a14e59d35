// Package flow implements the request-rate algorithms of sluice flow rules.
//
// Every algorithm admits atomically: with any number of goroutines, the number
// admitted in a window never exceeds what the algorithm's definition promises,
// because a Limiter reserves first, checks, and undoes a reservation that does
// not fit. No algorithm spins or waits for a lock held across a decision, and
// none drops a count or lets more through when the clock steps backwards:
// time as seen by a Limiter never goes back, an earlier reading is treated as
// the latest one seen (or, by the buckets, as one that has seen less refill).
// A RetryAfter is measured on the caller's clock.
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
//     admit from leases (AcquireOn): a CPU takes up to 64 permits at once,
//     at most 1/256 of the quota left shared among the CPUs, counted in the
//     current bucket and usable only while that bucket is current; what a
//     lease has left goes back to its bucket when the CPU takes the next
//     one. Nothing passes beyond the limit: the leases' permits are in the
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
//     limits above 1000 per second pace correctly.
//
// All times are nanoseconds from the Guard's clock (package clock).
package flow
