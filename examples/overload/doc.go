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
// counted, then -duration measured. With -slowdown it then runs the
// adaptive rule at 2x the capacity while the backend becomes 2x slower
// halfway, and prints the rule's limit over time and how long it took to
// settle. With -priority it then runs the protections that shed by
// priority level (adaptive, system) at 3x the capacity, critical requests
// (header X-Priority) at 0.5x and sheddable ones the rest.
package main
