// Package hotspot implements hotspot rules: a limit on each value of a
// request parameter (a user ID, a tenant, a client IP) separately, as
// Sentinel's parameter flow rules do, in a table whose memory stays bounded
// however many or hostile the values are, and whose hot values survive a
// flood of cold ones.
//
// # Algorithms
//
// Each tracked value has one record holding its state:
//
//   - TokenBucket: Limit requests per Window, refilled continuously, up to
//     Limit+Burst tokens. The state is the bucket's TAT (the time it is full
//     again), by the arithmetic of flow.GCRA; a new value's bucket is full.
//   - LeakyBucket: pacing, one request per Window/Limit; a request whose
//     slot lies within MaxWait is admitted with Decision.Wait, the time to
//     wait before proceeding, else rejected. Also a TAT, the end of the
//     last slot taken.
//   - Concurrency: at most Limit requests of the value in flight, reserved
//     then checked, ended by Release.
//
// Buckets are exact at every rate a rule accepts (up to one request per
// nanosecond, windows and capacities up to flow.MaxSpan): a TAT is kept as
// nanoseconds plus a fraction of one in units of 1/limit ns, the value's
// limit, in which one request's cost, Window/limit, is whole. 3 per second
// or 6e8 per second (1.67 ns a request) admit exactly that; only waits and
// retry hints are rounded, up, to a nanosecond. The fraction is in units of
// the value's limit: a reload that changes a limit (Limit or an override)
// rounds every TAT of the table up to a nanosecond, and the Limiter before
// the reload, which may still decide requests that read the rules before
// it, rounds the TATs it decides on up before and after, and gives back
// whole nanoseconds: neither ever admits early.
//
// A decision that admits a request and leaves the value no quota
// (Remaining 0) tells, as Next, when the value's next request would be
// admitted: the RetryAfter of a rejection right after it, so that the hint
// of the last admitted response and of the block after it agree
// (TestLastAdmittedHintMatchesNextBlock in core and adapters/nethttp).
//
// A leaky bucket's waiter that gives up (Undo: its wait was cancelled, or
// another rule rejected the request) gives its slot back: when its slot was
// the last one taken the TAT moves back, else the slot becomes a gap, merged
// with the value's adjacent gaps, and the value's next requests take the
// earliest gap that holds them (within MaxWait) before queueing after the
// TAT; a rejection's retry hint is when that gap comes within reach, if
// sooner. So after any pattern of cancellations a new request waits no
// longer than the live requests of its value ahead of it require. Gaps are
// kept per shard, at most 256 of 40 bytes (allocated as they are given
// back), and dropped when they have passed or their value is evicted (its
// debt is its TAT). A waiter whose value is evicted while it waits gives
// its slot back where the value's state went: to its debt, when the debt is
// the value's own and the slot was the last one taken (the debt moves
// back), or to the value's new record once it is tracked again (a gap);
// else it is forgotten. A slot given back when its shard holds 256 live
// gaps is forgotten: requests then wait for it as if it were taken,
// longer, never earlier. A request decided before another gave its slot
// back keeps the slot it was given: it waits no longer than it was told,
// at most MaxWait, but may be served after a later request that took the
// slot given back.
//
// Overrides give specific values their own limit (for TokenBucket, Burst
// applies to it too); an override of 0 blocks the value without giving it a
// record. A Decision carries a handle on its record for Undo and Release;
// the handle holds the record's generation, which every reuse of the record
// changes, so a handle never acts on a record that has since been evicted
// and given to another value (or to a new life of the same value).
//
// # The table
//
// Values are known by a 64-bit keyed hash (hash/maphash under a secret seed
// of the table, no package state): the value is never stored, so every
// value, of any length, takes the same memory, the table keeps no reference
// to the caller's strings, and hashes cannot be computed or steered from
// outside. Two values are confused by chance only, about n/2^64 per lookup
// in a table of n (5e-15 at 100 000; at a million lookups a second on a
// million values, once in 200 days), and then share one record, each
// counted the other's requests: an error on the side of the limit.
//
// The table is split into shards by the hash: up to 64, as many as keep at
// least 128 records in each, and beyond 64 as many as keep at most 32 767
// in each (a table of 100 000 has 64 shards of 1 562, one of 10 000 000
// has 512 of 19 531). Each shard has its own mutex, so requests of values
// in different shards do not contend, and holds its records in one slice,
// an open-addressing index from hash to record, and the two lists of a
// segmented LRU whose protected segment is kept by CLOCK (below). The
// index is linear probing over entries of 4 bytes (a record's number and
// 17 bits of its value's hash), at most half full (a full shard of 1 562
// uses 4 096 slots, 16 KiB), with deletion by backward shift: it needs no
// tombstones and, once its shard is full, never rebuilds. A probe reads 1.5 slots on average
// when the value is there and 2.5 when it is not; the keyed hash keeps it
// so for values chosen by an attacker. An Acquire hashes the value, locks
// its shard, probes the index, flags the record used (or moves it, when it
// is new or promoted), updates the state and unlocks: O(1), with no loop
// whose length depends on time or on other records' state, and no retry (a
// promotion also looks at up to 8 records of protected; a leaky bucket with
// gaps scans its shard's gaps, at most 256). The state is plain memory guarded by the
// shard's lock, updated by the arithmetic of flow.GCRA, which the flow
// rules apply to one atomic TAT. A token or leaky bucket
// shard keeps the state of the value it decided twice in a row, its front,
// on the cache line of its mutex: a hot value decided from several CPUs at
// once moves that one line between them, not a second one for its record,
// and skips the probe.
//
// # Eviction resists scans
//
// Each shard is a segmented LRU of MaxKeys/shards records: a probation
// segment (at least a fifth of the shard) and a protected one (at most
// four fifths), each a doubly-linked list threaded through the records by
// index. A new value enters at the head of probation. Using a value again
// while it is in probation promotes it to the head of protected. Using a
// protected value only flags its record used: the lists are not written,
// so a hit reads no other record (moving it to the head, as an exact LRU
// does, would write its neighbours' and the head's, three cache misses on
// a large table). When a promotion puts protected over its share, the
// record at its tail is demoted to the head of probation, unless it is
// flagged: then it is moved back to the head, its flag cleared (a second
// chance: CLOCK, the usual approximation of LRU), and the next tail is
// considered, up to 8 times, after which the tail is demoted flagged or
// not. When the shard is full, a new value takes the record at the tail of
// probation (of protected if probation is empty); its value keeps its debt
// (below). Every step is a constant number of list operations.
//
// Values seen only once never leave probation, so a flood of one-time
// values, however large, only ever evicts probation: the values in
// protected, which were used at least twice, are not touched. A value is
// promoted if it is used again before its shard's probation length of new
// values arrive in its shard (at least a fifth of the shard: about a fifth
// of MaxKeys new values over the table). A protected value is demoted only
// when promotions of other values bring it to the tail of protected, once
// protected's share of records (about four fifths of MaxKeys over the
// table) has been put at the head after it, by promotions or second
// chances; used since it was put there, it gets a second chance, unless it
// is the ninth flagged record in a row at the tail. A demoted value gets
// another probation's length of chances. Every Acquire counts as a use, rejected
// ones included. Which values stay in the table is a matter of speed and
// precision only: limits do not depend on it.
//
// # Evicted values keep their debt
//
// A value whose state limits it, or nearly (it has spent at least half its
// bucket), is never given a fresh state because of other values, whatever
// their number and pattern (each once, twice, cycling); one that has spent
// less may get back at most what it spent; and memory stays bounded by
// MaxKeys:
//
//   - Concurrency: a record with requests in flight is pinned: taken out of
//     both lists, it is never evicted and its count never lost; its last
//     Release puts it back at the head of its segment. A value that finds
//     every record of its shard pinned (more values in flight at once than
//     the shard's share of MaxKeys) is rejected until one is released.
//   - TokenBucket, LeakyBucket: a bucket evicted while its TAT is later than
//     the time of the eviction (tokens spent, or slots taken) leaves that
//     TAT, rounded up to a nanosecond, its debt, in its shard's debts: a
//     fixed array of max(records/2, 64) cells of 16 bytes, allocated at the
//     shard's first such eviction. Seen again, the value resumes from the
//     debt it left, or from a later one (below), or, for a light debt that
//     was forgotten, with a full bucket. A bucket evicted full leaves
//     nothing: it restarts full, as it was.
//
// A debt is heavy when it is at least half a bucket's capacity (the
// smallest capacity over Limit and Overrides; a capacity is Window +
// Burst*Window/Limit for a token bucket, MaxWait + Window/Limit for a leaky
// bucket): "5 per 15 minutes" keeps, as heavy, the debt of a value that
// spent 3 attempts or more, and forgets, when it must, that of one that
// spent 1 or 2. A debt is written to two cells chosen by a hash of the
// value (a cell whose TAT has passed is free again). A heavy debt is kept
// in both: a cell where it meets another value's heavy debt holds the
// later of the two for both values (mixed), and one that held a light debt
// forgets it. A light debt is only written to cells that hold no other
// value's live debt, and is lost when neither is free or when heavy debts
// take both its cells over. A value owes the debt of a cell of its own,
// else, when both its cells are mixed, the earlier of their TATs, else
// nothing.
//
// So the error on heavy debts is on the side of the limit: a value that
// owes nothing, or less, inherits a debt only when both its cells hold
// several values' heavy debts, and starts with the bucket of the latest of
// them; while live heavy debts are fewer than about a quarter of the cells
// that almost never happens. The error on light debts is the other way, and
// bounded: a value that spent under half its bucket, evicted when its
// shard's cells are full of live debts, comes back with a full bucket,
// having had at most half a bucket more than its limit; getting this again
// takes another flood that evicts it.
//
// A flood of junk values each sent once or twice thus leaves new values
// their whole limit, during and after it. Measured on a "5 per 15 minutes"
// token bucket of MaxKeys 1000 (go test ./core/internal/hotspot -run
// 'TestFloodDegrade|TestFloodLeavesNewUsersTheirLimit' -v): during 2
// minutes of 1000 to 10 000 junk values each sent twice, 100% of new users
// have their 5 attempts, and right after it or a minute later 99-100% of
// them (200 each time, with 10 000 or 100 000 junk values, 40 users having
// spent 3 or 5 attempts before the flood); with MaxKeys 100 000 and 1 or 10
// million junk values, 100%. Before, with 10 000 junk values, 16-20% had 5
// during the flood and none right after it, until 15 minutes later. The
// users who had spent their attempts stay limited through the flood.
//
// A flood of more values each spending half their bucket or more than the
// table and its cells tell apart still makes new values start with spent
// buckets: any of them could be a value returning with a heavy debt, which
// bounded memory cannot tell apart, so one that inherits a debt and spends
// more is remembered owing both. Measured the same way with junk values
// each sent 3 times: with 1000, every new user has 5; with 4000, 41-44%
// during the flood and none right after it; with 10 000, 17-18% during and
// none after. A debt is paid at most one bucket capacity (the longest over
// Limit and Overrides, unless a reload cut the rate) after the last request
// admitted before it was recorded: one capacity after a flood stops, every
// value not limited by its own requests has its whole limit again. New
// values stay exact while MaxKeys exceeds the number of values in heavy
// debt at once (those that spent half their bucket within one capacity).
//
// A cell tells values apart by their hash less its two lowest bits, and a
// value seen again frees the cells it alone holds, its record carrying the
// debt. From 4 shards (MaxKeys 512) those bits choose the shard, so a cell
// confuses two values of its shard only when the table does; in a smaller
// table two values agreeing on the other 62 bits (about 2^-62 a pair) would
// let one free the other's debt. A debt is written when the eviction's
// time is earlier than the TAT; requests of several goroutines read the
// clock before taking the shard's lock, so a request that read it before an
// eviction but decides after it may find the evicted value's bucket full
// early by at most the time between the two readings.
//
// # Bounds and memory
//
// The table never holds more than MaxKeys values (default DefaultMaxKeys,
// 100 000); eviction is per shard, so it may evict before the whole table is
// full when values spread unevenly. A record is 48 bytes and holds no
// pointer (the garbage collector does not scan the table); with the index
// and the debts (8 bytes per value), a full table of 100 000 takes about 71
// bytes per value (measured by TestMemoryPerKey and BenchmarkHotspotMemory).
// Shards allocate as they fill, doubling up to their share, and their debts
// at their first eviction of a live bucket, so a table costs memory for the
// values it has seen, not for MaxKeys; a full table never allocates again.
//
// # Cost
//
// A decision hashes the value once (its id), takes its shard's lock,
// probes the index (one cache line) and reads the record (one line, two
// when it straddles a line boundary), then applies the bucket's
// arithmetic; a hot value (its shard's front) skips the probe, and
// AcquireTo without quota (a Guard's request decided by its only hotspot
// rule, without WithQuotas) the bucket's Remaining and Next. The figures
// are beside the benchmarks (bench_test.go); the pass in a Guard, and what
// was tried and not kept, in core/internal/peerbench's README ("Where a
// pass goes").
//
// # Reloading rules
//
// New and Reload take the Limiter of the same rule before a reload and
// carry its state over, so a reload does not reset a limit: a value keeps
// all the requests it owes at the reload under another window, limit,
// MaxKeys or bucket algorithm, so a reload reverted gives nothing back
// (New's doc says how, and what it costs; go test -run TestReload
// ./core/internal/hotspot).
//
// Times are nanoseconds of the Guard's clock (package clock), passed to
// Acquire by the caller, which reads the clock once for all the rules of a
// request.
//
// The package is internal to core: a hotspot rule is a core.Rule of
// core.KindHotspot.
package hotspot
