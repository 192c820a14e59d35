// Command overload measures what sluice's protections do for a service
// pushed past its capacity, side by side in one run:
//
//	go -C examples run ./overload                     # the full run, about 5 minutes
//	go -C examples run ./overload -duration 3s -warmup 2s -slowdown=false -priority=false
//	go -C examples run ./overload -backend cpu          # a CPU-bound backend
//
// It serves, over loopback, a simulated backend of fixed capacity
// (-workers requests at a time, each taking -service; the others wait in a
// queue, which a request leaves when its client gives up) through sluice's
// net/http middleware, and drives it open loop: requests start at a fixed
// rate, -load times the capacity, whether the earlier ones ended or not,
// each with a deadline of -deadline. For each protection and load it
// prints the goodput (answers within the deadline per second, and as a
// share of the capacity), the median and 99th percentile latency of the
// requests admitted (one that timed out counting as the deadline), and the
// share rejected (503) and timed out:
//
//   - none: no rule; the queue grows until requests time out in it.
//   - static: a concurrency rule whose limit is the number of workers, as
//     someone who knows the backend would set it.
//   - adaptive: an adaptive rule with no number in it; it finds its limit
//     from the response times.
//   - system: a system rule as Sentinel's documentation sets one: signal
//     cpu, threshold 0.8, strategy bbr (while the CPU is busier, admit
//     what the recent throughput sustains). The CPU usage is the
//     process's own (see core.SignalCPU): the sleep backend waits rather
//     than computes, so the rule acts only on the cpu backend; and when
//     other processes take the CPUs, the process's usage cannot reach the
//     threshold, and the rule does not act (the rt and adaptive rules
//     do).
//   - system-rt: a system rule that holds the average response time at
//     twice the service time (signal rt, threshold 100ms by default):
//     while it is over, it admits what the completion rate times the
//     threshold allows (Little's law).
//
// The load generator runs in a child process (the command started
// again, see package engine's generatorEnv), as clients elsewhere would:
// -inprocess runs it in the server's process instead. Each row also prints sched p99, the 99th
// percentile of how long the server process's goroutines waited to run
// (runtime/metrics /sched/latencies:seconds), and the limit, the median
// of the rule's limit sampled every 100ms (the adaptive limit; for the
// system rule, the BBR bound while the CPU is over the threshold). -trace
// writes the server process's execution trace to a file: go tool trace
// -pprof=sched reads from it where its goroutines waited to run. -samples
// writes the rule's state every 100ms to a file, tab-separated: its limit,
// the requests in flight, the response times it compares (adaptive: the
// recent and the minimum RT; system: the average and lowest of the last
// second) and the system rule's CPU reading.
//
// With -backend cpu a request computes instead, rounds of SHA-256
// calibrated at start to take about -service on one idle CPU, with
// -workers (default GOMAXPROCS) at a time. The load generator shares the
// CPUs, so the capacity is measured at start, closed loop over HTTP, and
// printed; the loads are multiples of it.
//
// Each row runs on a fresh server and Guard: -warmup of load, not
// counted, then -duration measured. The host's load average is printed
// before and after the table: on a host other processes keep busy, the
// backend and the load generator share the CPUs with them, and the rows
// measure that host. With -slowdown it then runs the
// adaptive rule at 2x the capacity while the backend becomes 2x slower
// halfway, and prints the rule's limit over time and how long it took to
// settle. With -priority it then runs the protections that shed by
// priority level (adaptive, system) at 3x the capacity, critical requests
// (header X-Priority) at 0.5x and sheddable ones the rest.
//
// The measurements against real time that used to be tests are benchmarks
// (engine/bench_test.go): go test -C examples -run x -bench . -benchtime 1x
// ./overload/engine/. The command is package engine's Program.Main:
// another module's main may add protections to it (see below).
//
// # The CPU-bound benchmark
//
// The comparison issue 27 asks for: a CPU-bound backend of known capacity
// (20ms of CPU per request), open loop at 1x, 2x, 5x and 10x, under the
// adaptive rule and the cpu system rule with the BBR check. The target is
// at least 90% of the capacity served at every load with a p99 at most 3x
// the unloaded one. One command:
//
//	go -C examples run ./overload -backend cpu -service 20ms -warmup 3s -duration 5s -load 1,2,5,10 -protect none,adaptive,system -slowdown=false -priority=false
//
// Figures, the 2-vCPU VM otherwise idle, four runs of
// examples/overload/sentinel/run.sh (Sentinel in the same process, the
// loads interleaved): 2026-11-28 22:57 and 23:06 UTC (load average
// 1.1-3.2) and 2026-11-29 01:14 and 01:17 UTC (1.6-2.6). Capacity 93-100
// requests/s, unloaded p50 20.9-21.2ms, p99 24.7-28.3ms. Goodput in % of
// capacity at 1x / 2x / 5x / 10x, then p99 over the unloaded p99:
//
//	adaptive   96-100 / 96-100 / 93-97 / 94-98    1.6-2.8 / 2.5-2.8 / 2.4-3.3 / 2.4-2.8x   limit 3-4 (1x: 5-20)
//	system     92-99  / 95-101 / 92-97 / 92-94    1.2-1.9 / 1.8-2.5 / 1.7-2.7 / 1.8-2.6x   bound 2-3
//	Sentinel   93-97  / 95-98  / 95-98 / 93-94    1.1-1.3 / 1.7-2.1 / 1.8-2.1 / 1.9-2.3x
//
// Sentinel is Sentinel-Go v1.0.4's BBR system rule (CpuUsage 0.8), from the
// benchmark-only module examples/overload/sentinel, whose doc tells what it
// adds. Both sluice rules serve at least 90% at every load, at or about
// Sentinel's goodput. The system rule meets the 3x everywhere; the adaptive
// rule in 14 of these 16 rows (3.2x and 3.3x at 5x; session 19's runs: 3 of
// 16 rows over, up to 3.6x at 1x). It holds 3-4 in flight where the system
// rule holds 2-3: its RT readings at 4 (-samples: 26-37ms against a minimum
// of 20.4ms) straddle the tolerance 1.5, because part of the queue is
// before the rule (requests wait for a CPU to reach it: the client's p50 at
// 4 is 39-42ms). Judging a growth by the throughput it buys
// (core/internal/adaptive) makes the fake clock's model of this host hold 3
// in 55-75% of the intervals (4 in 90% before); on the host the limit reads
// 3 or 4 (the 2026-11-29 runs: 3 in 3 of 8 rows). A cap at a multiple of
// the bandwidth-delay product (rate times minimum RT, as BBR bounds) was
// tried and not kept: it refused bursts a varied service carries (70-80% at
// 1x on the fake clock).
//
// The cause, traced interval by interval on a loaded host: a request
// waits for a CPU before it reaches the rule (the scheduler runs it when a
// computing request's 10ms slice ends), so a slot the rule frees stays
// empty for a while, and the RT at 3 in flight read only 1.1-1.2x the
// fastest requests' 20-22ms, at 4 in flight 1.4-1.5x that at 3. A
// periodic probe, at 0.9/tolerance of a limit of 5-6, ran at 3 and raised
// the minimum RT to what 3 take (24-27ms), over which 4 in flight were
// within the tolerance. A periodic probe now only lowers the minimum (a probe
// after 20 congested intervals, a service slower for good, may raise it);
// core/internal/adaptive's TestCapacityUnderOpenLoad models the scheduler
// and pinned the p99 at 3.4x at 10x before, 2.5x now. With tolerance 1.2
// (default 1.5) the rule had held 3 and served 94-99% with a p99 of
// 2.5-2.7x; on the fake clock's varied services that tolerance serves 86%
// at 1x, so the default stays.
//
// The system rule's dips (87% at 5x once): on a loaded host (its CPUs
// taken by other processes), -samples showed the bound off whenever the
// process's CPU reading stayed under 0.8 for a second, the flood then
// admitted (200-430 in flight), and, once the bound applied again, its
// completion rate counting the queued requests that ended when their
// clients gave up: a bound of 6 at 5x and 11-14 at 10x for about a
// second, where 3 holds. On the idle VM the load generator takes part of
// the CPUs at 5x-10x, so the reading runs close to 0.8; whether it dipped
// in that run is for -samples to show. Core no longer counts a request
// that ends with a context's error (Entry.Exit) as a completion, and the
// net/http middleware exits a request whose handler wrote nothing after
// its client left with that error, as this backend's queued requests do.
// One idle run with both (18:34 UTC): system 97/96/95/96% at 1x-10x, p99
// 1.4/2.3/2.3/2.1x, bound 2-3; adaptive 97/98/95/95%, 2.9/3.0/2.4/2.8x,
// limit 4; Sentinel 95/95/93/96%, 1.0/1.8/1.9/1.9x. A tolerance of 1.4
// held the same limit 4 (2.9/3.2/2.8/2.8x at 18:30): the default stays.
//
// The load generator runs in a child process (-inprocess: in the server's,
// as before 2026-11-28). In the server's process its goroutines, woken by
// timers and the network, waited for a P behind the handlers, which
// compute until the scheduler preempts them after 10ms: on a busy host,
// stamped at the client and at the server, they sent requests 11-16ms
// late (median) and read answers 9-13ms late, against 0.6-1.1ms and
// 0.1-1ms in a child process; on the idle VM the adaptive rule's p99 was
// then 3.8-4.4x at 2x-10x. What remains is the server's own wait before a
// request reaches the guard (sched p99, about a 10ms slice idle), which
// no rule shortens. -trace FILE writes the server's execution trace
// (go tool trace -pprof=sched FILE shows where goroutines waited).
package main
