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
// (bench_test.go): go test -C examples -run x -bench . -benchtime 1x
// ./overload/.
//
// # The CPU-bound benchmark
//
// The comparison issue 27 asks for: a CPU-bound backend of known capacity
// (20ms of CPU per request), open loop at 1x, 2x, 5x and 10x, under the
// adaptive rule and the cpu system rule with the BBR check. The target is
// at least 90% of the capacity served at every load with a p99 at most 3x
// the unloaded one. One command:
//
//	go -C examples run ./overload -backend cpu -service 20ms -warmup 3s -duration 5s -load 1,2,5,10 -protect adaptive,system -slowdown=false -priority=false
//
// On 2026-11-28 at 11:52 UTC, the 2-vCPU VM idle, before the changes
// below: capacity 96 requests/s, unloaded p50 21.0ms, p99 25.4ms; the
// adaptive rule served 98-105% of the capacity at every load with a p99 of
// 1.9x, 4.4x, 4.3x and 4.8x the unloaded one (limit 18, 6, 5, 6); the
// system rule 97-101% with 1.8x, 3.6x, 4.1x and 4.2x (bound 3-4). Both
// kept a queue as long as the 2 workers: the adaptive rule's probes
// stopped at its minLimit 4, so that the minimum response time included a
// queue; the BBR bound was twice what the throughput sustains. Now the
// adaptive rule's probes go under a limit at which requests still queue
// (minLimit 2) and the BBR bound is the throughput times the minimum
// response time plus one: both keep about 3 in flight, one waiting. On
// the fake clock, a model of this backend (2 workers of 20ms) at 1x-10x
// is served 100% with a p99 of 1.0-1.9x the unloaded one by both (go test
// -run CapacityUnderOpenLoad -v ./core/).
//
// The real run after the changes could only be made on the VM shared
// with seven other jobs (load average 8-16): the capacity measured at
// start moved between 11 and 23 requests/s from run to run and within
// one, so that shares of it and ratios of latencies were noise (the
// adaptive rule's p99 1.4-18x the unloaded one in one run, 0.7-17x for
// the version before in the next), and the cpu rule never acted: the
// process's own CPU usage, which it reads, stayed under its threshold
// while the neighbours took the CPUs. The figures on an idle VM are to be
// measured with the command above. Sentinel-Go is not in the table: its
// module is not served by the module proxy here, and none of it may be
// committed.
package main
