// Package redisstore is a store.Store on Redis: limits shared by every
// instance of a service, through one Redis, Redis Sentinel or Redis Cluster
// (any go-redis UniversalClient). Give it to a Guard with core.WithStore and
// name it in rules (`store:`); see package store.
//
//	client := redis.NewUniversalClient(&redis.UniversalOptions{Addrs: []string{"redis:6379"}})
//	s, err := redisstore.New(client, redisstore.WithTimeout(20*time.Millisecond))
//	...
//	defer s.Close()
//
// # Modes
//
// Exact (store.Exact, the default): every decision is made in Redis by a Lua
// script, atomically, on Redis's own clock (TIME), so the instances' clocks
// do not matter and the limit holds exactly across instances. There is one
// script per algorithm: the sliding counter (as the memory store computes
// it: the previous window weighted by its overlap, plus the current one),
// and the token and leaky buckets as GCRA, on one TAT. Times are integer
// nanoseconds; costs and tolerances are computed in Go with 128-bit
// products, so a bucket of a million requests a second paces to the
// nanosecond and never accumulates rounding. Scripts are called by EVALSHA;
// a NOSCRIPT answer (a flushed cache, a new node) is retried with EVAL,
// which caches the script again.
//
// A decision that leaves no quota tells as Next the wait a rejection right
// after it would tell (on Redis's clock, which runs on between the two), in
// both modes; in approximate mode except for a sliding counter's permits
// admitted from a CPU's lease (Next 0: the Guard reports the window).
// TestGuardLastAdmittedHintMatchesNextBlock and the suite's
// LastAdmittedTellsNextRetry check it against a real redis-server:
// go test -run 'LastAdmitted' ./ in this module.
//
// Decisions are batched: the Store's dispatcher goroutines take the Takes
// that arrive together and send them in one pipeline, one round trip, and
// the decisions of one key in one script call (one TIME, one read, one
// write for all of them, in arrival order). A lone Take is sent at once,
// as one call; with a client that honours contexts (ContextTimeoutEnabled),
// it is made on the caller's own goroutine, sparing two goroutine switches
// (on a 2-core VM they cost about 20µs: a lone decision took 1.7x a PING
// without ContextTimeoutEnabled, 1.3x with it; BenchmarkRedisExactVsPing).
// A client that does not honour contexts cannot be called there: its reads
// would wait for its own ReadTimeout, not the Store's timeout.
// WithBatchSize(1) turns batching off: each Take makes its own call on its
// own goroutine.
//
// Approximate (store.Approximate): decisions are made in the process, in
// a hundred or two nanoseconds without allocating, on this instance's counts
// plus the other instances' counts as last read from Redis. Every sync
// period (WithSyncPeriod, default 100ms) the Store pushes what it admitted
// since the last sync for each key in use, in pipelines of the batch size,
// and reads back the global counts; Redis's clock is read in the same round
// trip, and local time is kept on it, to within half that round trip
// (read once a millisecond: decisions are as precise, and never see time
// run ahead); a wait or retry time can be longer than Redis's clock would
// make it by that error. A key the Store does not track yet, or did not use
// for two sync periods, reads the global counts first (one round trip). The Store tracks at most WithMaxKeys keys; a key beyond is decided
// in Redis, on the same counts, one round trip per decision, until idle keys
// are forgotten (after their state stops mattering plus the idle expiry).
//
// The sliding counter is approximated as in RussellLuo/slidingwindow's
// SyncWindow: counts per aligned window of Redis's clock, shared by INCRBY.
// Locally its counts are under a mutex; once two Takes contend for it, each
// CPU leases up to 64 permits of the current window at a time (at most
// 1/256 of what is left per CPU, none when under 8), counted and pushed as
// admitted when leased, and admits them on a cache line of its own: a
// hot key decided on every CPU takes 35-55ns a decision instead of 110-150
// (2 CPUs, BenchmarkRedisApprox). A lease never admits beyond the limit;
// what it holds unused when its window ends stays counted in that window,
// so a window can admit up to 64 per CPU fewer than the limit. A key with
// leases holds 64 bytes per CPU more.
// The token and leaky buckets decide locally on a local TAT; each sync sends
// the cost admitted since the last one, and Redis keeps the later of (the
// stored TAT plus that cost) and the instance's own TAT, so costs of
// different instances add up, and a bucket that one instance alone drains
// is exactly its local bucket. A leaky bucket's waits are then only as
// exact as the shared TAT is fresh.
//
// # Overshoot of approximate limits
//
// Let N be the number of instances, P the sync period, L the limit of a
// window W, and G a Store's Stats.MaxSyncGap: the longest span from the
// start of a successful sync round to the end of the next (or to now,
// while it has not come). An admission reaches Redis within its
// instance's G (the next successful sync that starts after it pushes it),
// and another instance's decisions within that instance's G more: S = G_i + G_j. So when an instance admits a request,
// the admissions it does not know of are those the others made in the last
// S, and in any window the instances together admit at most
//
//	L + (N-1)·A(S)
//
// where A(S) is the most one instance admits within a span of S; for the
// buckets, the same excess over what one bucket would admit (its capacity
// plus its refill). A(S) is at most min(L, r·S) for an instance offered r
// requests a second. With a load over the limit spread evenly, each
// instance admits about L/(N·W) a second and the excess is about
// (N-1)/N · L · S/W.
//
// G is about P plus a round trip while the host runs on time (S about
// 2P + 2 round trips: 13% for N=3, P=100ms, W=1s). It has no bound that
// holds under load: the sync goroutine runs as late as the host makes it,
// and a failed round (Redis slow, or the lag past the timeout) adds a
// period. Measured with two Stores, P=100ms, the CPUs saturated by
// spinning goroutines (and 4 busy processes): G 160-210ms, S 340-390ms,
// windows of 94-116 for a limit of 100 offered 400 a second, against bounds
// of 170-183 (TestApproxBoundUnderLoad checks every window against the
// bound with S measured). Read Stats.MaxSyncGap to know S on your hosts.
// The only bound that holds whatever the load is N·L: a burst offered to
// every instance at once, within S of each other, after a quiet spell.
//
// While Redis is unreachable, the syncs fail. For the sync age (10 sync
// periods, at least 1s, plus the lag of a busy host: see WithSyncPeriod and
// WithMaxLag) after the start of the last successful sync round, each
// instance goes on limiting on its own counts and the others' as last read:
// it admits at most L less what it saw counted. A key that never read the
// counts from Redis (new to the instance: a Store started, a key first used,
// or a rule reloaded into approximate mode during the outage) fails at once,
// the instance knowing nothing of the others' admissions, with an error
// wrapping store.ErrKeyUnavailable: a Guard applies the rule's failure
// policy to its requests (FailLocal: LocalLimit, below) without counting a
// failure of the store, so one failed sync round does not send the keys that
// did read their counts to the failure policy, and the store stays healthy
// (go test -run 'NeverSynced|NewKeysDuringASyncBlip' in this module). Once
// the sync age has passed, Take fails (an error wrapping
// store.ErrUnavailable that says for how long the counts were not
// synchronized), and a Guard applies the rule's failure policy, reports the
// store's approximate mode unhealthy in Guard.Stores (since when, and each
// rule's policy and local limit) and stops calling it but for a probe each
// backoff (core.WithStoreBreaker). Under FailLocal (the default), each
// instance then admits its LocalLimit per window on its own, which starts
// empty: in the window of the switch an instance admits up to its
// approximate count plus LocalLimit, and in each later window up to
// LocalLimit. So the N instances together admit at most N·L in the window
// the outage starts, at most N·(L + LocalLimit) in the window of the switch,
// and N·LocalLimit in each window after it; a LocalLimit of L/N (the share
// of each instance) keeps the fleet at L. FailClosed admits nothing,
// FailOpen everything. The same bounds hold for a key that never read its
// counts during a failed sync round: what its failure policy admitted is not
// pushed, so in the window it reads them an instance admits up to LocalLimit
// plus its approximate count. A sync that is only late, on a busy host, does
// not make Take fail: the counts of the instances are then as stale as
// MaxSyncGap says. Counts are pushed once Redis is back; the next successful
// sync makes Take decide locally again, and the Guard's next probe finds it.
// TestGuardModesFailApart kills and freezes Redis under a Guard with an
// exact and an approximate rule: the approximate rule admits LocalLimit once
// its counts are a sync age old, and both modes recover by themselves (go
// test -run TestGuardModesFailApart).
//
// # Reloads
//
// A limit whose window or limit a reload changed keeps what each client
// spent and owes, as with the memory store (package core: a tightened
// rule is waited out at its new rate, a loosened one lets its new
// allowance through). A bucket's TAT is converted to as many requests
// owed at the new cost of one request, which Redis keeps beside it: 10 of
// 10 a minute spent, cut to 5 a minute, wait 1m12s. An exact sliding
// counter's keys name the window, and Redis keeps the window last written:
// the first decision in a new window carries the old window's counts over
// (each at the last nanosecond of its old window, the new current window
// ending where the old one did), in one more round trip, and deletes the
// old window's key: a window changed back carries what was spent under the
// other, not what its old key held before. In approximate
// mode the key's entry carries its counts and TAT to the entry of the new
// limit: what this instance admitted, and what it knew of the others until
// its next exchange reads their carried counts. A decision in flight on the
// old limit (a request that entered before the reload) counts in what is
// carried: the old entry is marked replaced before its counts are read, and
// a decision that finds its entry replaced after deciding is made again on
// the new one (its count may then be pushed twice: fewer admitted, never
// more). So a reload admits at most the limit (plus the overshoot of
// approximate limits, below): TestApproxReloadCarriesDecisionsInFlight runs
// 5 decisions on the old limit between the carry and the replacement (10
// admitted of 10; 15 before), TestApproxReloadsBackAndForthKeepTheLimit 8
// goroutines deciding one key under two windows in turn (at most 10 of 10;
// 11 in nearly every run before, 12 at times): go test -run
// 'TestApproxReload' ./ in this module. A decision whose entry was replaced
// 64 times under it fails with store.ErrKeyUnavailable (the goroutines of
// that test needed at most 4). Instances that reload at
// different times decide meanwhile on their own rule: during that skew
// exact sliding counters on either window carry the count to their own key
// in turn (one count, a round trip more each time the other window wrote
// last). An approximate sliding counter decided in Redis (a key beyond
// WithMaxKeys) starts its new window's keys afresh. TestReloadedWindowKeepsWhatWasSpent and
// TestReloadedBucketKeepsItsDebt compare each algorithm and mode with the
// memory store (go test -run TestReloaded ./ in this module). The cost: a
// bucket's decision reads the cost beside its TAT and writes it with the
// TAT (exact/ping of token buckets 1.07-1.33 with or without that write,
// go test -run '^$' -bench RedisExactVsPing/token -benchtime 20000x
// -count 3, on a busy 2-core VM), a sliding counter's names one key more. Redis's commandstats (usec_per_call of EVALSHA over
// 20000 serial decisions of BenchmarkRedisExactVsPing, two runs each) went
// from 3.7-3.9µs to 4.5-4.6µs a token bucket decision and from 5.0-5.2µs
// to 5.3-5.4µs a sliding counter's: within the run-to-run spread of a
// decision's round trip here (exact/ping of buckets 1.16-1.18 before,
// 1.18-1.24 after, with a client honouring contexts).
//
// A change of mode keeps what was spent too. An exact decision first
// pushes what the key's approximate entry, if any, admitted since its last
// sync (one map lookup on each exact decision), then forgets the entry, so
// that a change back reads the counts anew. Buckets keep one TAT in both
// modes. A sliding counter's counts move between the modes' keys, once, in
// Redis: an approximate entry's first exchange moves the exact state of its
// window into the approximate counts (each count at the last nanosecond of
// its exact window, in the current window if that is later) and deletes it;
// an exact decision that finds no exact state and approximate mode's mark
// on the window marker (each exchange sets it) moves the approximate counts
// of the current and previous windows to an exact window starting where
// the approximate one did, and takes them off the approximate counts, in
// one more round trip (and one more to decide); the first decisions
// arriving together move the counts once. 6 of 10 spent in one mode, the
// other admits 4 at once (10 before), on the same instance or another;
// switched three times with 3 spent in each mode, the fourth admits 1 (3
// before); a bucket's last one may be refused, its approximate decisions
// being made on a view of Redis's clock a few microseconds off:
// go test -run TestModeChange ./ in this module. A reload that
// changes a sliding counter's mode and window at once starts afresh, as do
// keys decided in Redis beyond WithMaxKeys: up to twice the limit in the
// window of the change. While instances run a rule in different modes (a
// rolling reload), each mode decides on the counts its own keys hold, which
// move only when the exact state is empty or an approximate entry is new:
// up to the limit in each mode (the approximate one with its overshoot) in
// a window of that skew. An approximate admission undone after its count moved
// to the exact state leaves the approximate counts below 0 (-1 for one):
// the right net of both modes' counts, which every decision reads as at
// least 0, so that no mode admits more for it (go test -run
// TestModeChangeMoveThenUndo ./ in this module).
//
// # Key layout
//
// Every key is PREFIX:{KEY}:SUFFIX, PREFIX from WithPrefix (default
// "sluice"), KEY the store key the Guard passes (a rule's name, or a
// rule's name and a value), with '\', '{' and '}' escaped as `\\`, `\[`
// and `\]` (the empty key as `\e`), and a key longer than 256 bytes
// replaced by sha256:HEX. {KEY} is the Redis Cluster hash tag: every key of
// one limit is in one slot, and each script touches one slot.
//
//	PREFIX:{KEY}:sc:WINDOW           exact sliding counter: "S P C", S the start of the
//	                                 current window (ns), P and C the counts of the
//	                                 previous and current windows
//	PREFIX:{KEY}:sc                  the window (ns) the sliding counter was last written in,
//	                                 or "a": approximate mode's counts hold it
//	PREFIX:{KEY}:tb, PREFIX:{KEY}:lb token and leaky bucket: the TAT (ns), in both modes
//	PREFIX:{KEY}:tb:cost (lb:cost)   the cost of one request (ns) the TAT was written at
//	PREFIX:{KEY}:asc:WINDOW:INDEX    approximate sliding counter: the count of window
//	                                 INDEX (Redis time / WINDOW) of all instances
//	PREFIX:{KEY}:asc:WINDOW:INDEX:in its record of pushes: a hash of "SEQ TOTAL" by
//	                                 instance entry (ID)
//	PREFIX:{KEY}:tb:in:ID (lb:in:ID) approximate bucket: the record of an instance
//	                                 entry's pushes, "SEQ TOTAL" (ns of cost)
//	PREFIX:{STORE}:alive             a Store's marker (STORE its random id), set at
//	                                 each sync round, expiring two sync ages later
//
// ID is a random id of the Store and the number of the local entry of the
// key. Approximate pushes are idempotent: each sends the entry's running
// total (of a window, or of a bucket's cost), and Redis adds what its record
// lacks; a push whose reply was lost (a connection cut, a Redis killed
// between the command and its reply) is sent again and counts once. A Redis
// that lost its data (a restart without persistence, FLUSHALL) gets each
// instance's whole count of the current window back within two sync
// periods: each sync round of a Store that tracks keys, quiet ones too,
// reads and sets its marker (a round trip each sync period), and a round
// that finds it gone has the next one push every key it tracks
// (TestApproxCountsBackAfterDataLoss). In a Cluster, only the node holding
// the marker is watched so; keys evicted under maxmemory are not noticed.
//
// WINDOW is a Go duration ("1s"). Each key expires once its state no longer
// matters (two windows after its window started, or when its bucket is
// full again) plus the idle expiry (WithIdleExpiry, default 1s); records of
// pushes expire with their window or bucket.
//
// # Cost
//
// Measured on a 2-core VM whose loopback round trips are slow (50-80µs)
// and drift by a third within a minute, so each exact decision is timed
// against a PING made next to it (go test -run '^$' -bench BenchmarkRedis
// -benchtime 1s -benchmem):
//
//	                                               serial                      16 goroutines
//	PING round trip (the floor)                    57µs, 6 allocs              21µs
//	exact, client with ContextTimeoutEnabled       69µs, 13 allocs; 1.27-1.30x 14µs, 15 allocs (batched)
//	exact, client without it                       90µs, 22 allocs; 1.67-1.73x 14µs, 13 allocs (batched)
//	exact, one call per decision (WithBatchSize(1)) 81µs, 13 allocs; 1.29-1.35x 32µs
//	approximate sliding counter; buckets           61-65ns; 86-94ns, 0 allocs  35-53ns; 138-171ns
//
// An exact decision costs a PING plus the script's run in Redis. Counted
// with callgrind in redis-server 7.0 (1000 EVALSHA calls, far from the
// limit) before the scripts carried state across reloads (see Reloads for
// what that added): a token bucket decision ran 56k instructions, a sliding
// counter 82k (79k and 95k in the release before),
// redis_rate's script 72k, a script making only the same three calls
// (TIME, GET, SET PX) 42k, one doing nothing 18k with a bucket's key and
// three arguments (14k without arguments: 1.5-2k each). Most of the rest
// is Lua converting strings (strtod, about 0.7k instructions a number,
// six a bucket decision; sprintf, two) and building the reply: the
// scripts define no functions per call, read each number once, convert by
// arithmetic rather than tonumber calls, carry the idle expiry in a
// bucket's script, and answer a bucket's lone decision with one integer
// (a table reply costs about 5k more). The client side of a lone call
// builds its EVALSHA from arguments kept in the pooled call, integers by
// pointer (a boxed int64 allocates, a pointer does not): 13 allocations a
// sliding counter decision, 10 a token bucket, against 6 for a PING (the
// previous release: 25 and 22); five of them are the context that bounds
// the call by the timeout. Without ContextTimeoutEnabled a lone decision is
// handed to a dispatcher goroutine and back, so that its wait can end at the
// timeout: about 20µs more here. With 16 goroutines, batching gives 2.3x the
// throughput of one call per decision. The approximate buckets keep one
// shared TAT per key, so decisions on one key from several CPUs take turns
// on its cache line; the sliding counter leases permits per CPU (see Modes).
//
// # Failures
//
// Take and Undo never take longer than the timeout (WithTimeout, default
// 50ms) or than their context allows, while the process runs on time: a
// call that has no answer by then, or whose answer is an error or makes no
// sense, returns an error wrapping store.ErrUnavailable (and the context's
// error when the context ended), on which the Guard applies the rule's
// failure policy and its health breaker. A decision that makes more than
// one round trip (the first exact one after a change of window or of mode)
// has one timeout for all of them (go test -run
// TestReloadTripsShareOneTimeout: a later trip held as by a frozen Redis
// ends by the first one's deadline; it had a timeout of its own before).
// The dispatchers do the network
// I/O and the caller waits for them no longer than that, so this holds
// whatever the client's own timeouts; a call made on the caller's
// goroutine is bounded by its context, which the Store gives only to a
// client that honours it, or with batching off, where the client must
// honour contexts or have timeouts as short. A request whose caller gave
// up before it was sent is not sent; one that was sent may still count in
// Redis.
//
// On a saturated host, a goroutine runs long after the event it waits for:
// a reply that came in 100µs may be read 100ms later. That is not Redis
// failing, and calls then wait longer: the timeout plus the lag (how late
// the Store's timers fired in the last second), and as long again each time
// their own timer fires late, never more than the timeout plus WithMaxLag
// (default 1s) in all; Redis's client is then given that much too, and a
// reply that arrived while its caller waited to run is taken. While the Store's
// timers fire on time (within 1ms), a frozen Redis fails each call after
// the timeout; on a saturated host, after at most the timeout plus
// WithMaxLag (plus how late the caller's goroutine then runs, which no
// timer can bound). TestGuardSlowRepliesUnderLoad runs a Guard at 200 a
// second on a healthy Redis with the CPUs saturated: every window admits at
// most the limit plus 5%, and the failure policy decides under 5% of the
// requests.
//
// While Redis is down, each call costs up to the timeout (the client
// retries its dials; its MaxRetries tunes that), which is why the Guard
// stops calling a failed store for a while. When Redis comes back, the
// client reconnects and the Store works again by itself. A frozen Redis
// can hold a dispatcher, the sync and so Close for the timeout plus
// WithMaxLag with a client that honours contexts, else until the client's
// own read timeout.
//
// A Redis that answers, but slowly (a reply 40ms away, under the timeout),
// fails no call; a Guard stops waiting for it by its latency budget
// (core.WithStoreLatencyBudget, default 20ms): once the last 16 rounds of
// exact calls took longer (or 12 of them twice as long), the exact rules apply their failure policy at
// once, and a probe each backoff finds the way back when Redis is fast
// again. TestGuardSlowRedisLatencyBudget runs a Guard behind a proxy that
// delays Redis's replies by 40ms, then by none; TestGuardSlowRepliesUnderLoad
// checks that a busy host's late goroutines do not open it
// (go test -run 'TestGuardSlow'): the Guard judges the calls net of the
// host's lag over their own span, which a goroutine of its own measures
// (no request waits for it). It failed 6 runs in 16 beside two busy
// processes when the lag was one short sleep, and 1 in 16 when the request
// napped up to 10ms; with 4 busy loops on the 2 cores, alternating that
// binary with the present one (go test -c; -test.run
// TestGuardSlowRepliesUnderLoad -test.count 1), both passed 16 of 16. Where
// the calls looked slow, the lag measured was at least 5.8 times their
// excess over the budget (3.7 before), with 12 loops or two binaries of
// each at once. With the test's process stopped 200ms in every 210ms
// (SIGSTOP), the calls' median took 216-425ms, and the breaker stayed
// closed.
//
// Undo is best effort: an exact sliding counter or token bucket gives the
// count back in Redis; an exact leaky bucket leaves the slot empty (only the
// approximate mode knows whether a later request took a slot after it).
//
// Approximate decisions go on when Redis is down, on local counts, for
// the sync age (see Overshoot of approximate limits); Err reports the last
// sync's error and Stats counts syncs and failed syncs. A Store reads
// Redis's clock at its first sync round, even with no key to sync, so Err
// reports a Redis that never answered within a sync period; Ping checks at
// once (a startup check whose failure Err keeps until Redis answers), and
// the sync clears Err once Redis answers (go test -run
// TestErrWhileRedisNeverAnswered in this module). Close pushes the
// last counts, stops the Store's goroutines and waits for them; calls after
// Close fail with store.ErrUnavailable ("store is closed").
package redisstore
