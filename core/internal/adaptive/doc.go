// Package adaptive is the controller of adaptive concurrency rules: a limit
// on requests in flight that it finds from their response times, with no
// capacity given.
//
// Once per Interval the controller compares the average response time of
// the requests that ended in it (the recent RT) with the lowest seen (the
// minimum RT, what the service takes when nothing queues). Within halfway
// to Tolerance times the minimum (1.25x by default) the limit grows by its
// square root, while requests use more than half of it, from the limit in
// force (whose RT was read; from its unrounded value only at the minimum
// RT): 3 grows to 4, not 5. Up to Tolerance times the minimum it holds, so
// that it does not swing around the point where requests begin to queue;
// beyond, it shrinks towards the limit times Tolerance times the minimum
// over the recent RT (at most halving it), smoothed. Right after a probe
// (below), whose fewer requests lower the next interval's RT, it grows only
// at the minimum. The limit stays within [MinLimit, MaxLimit]; the RT of a
// request its caller gave up on counts only over the minimum
// (Controller.Done).
//
// Under overload (more requests refused than served since it), a growth
// must buy throughput for the RT it costs: unless the requests ended in the
// 3 intervals (and 16 requests) after it end more per second than before
// (smoothed) by a quarter over Tolerance-1 of the share their RT grew by
// (half of it by default), and filled the new limit, it is undone, to half
// a slot above the old level, which holds while requests fill it and the
// overload lasts (until a probe); a probe that comes first undoes it too.
// Ended faster by that and half their count's noise (its square root), or
// with no overload, the next growth may come at once: after an overload the
// limit grows back an interval at a time (core's
// TestPriorityLetsLowerLevelsInAfterOverload). On 2 CPUs, 3 in flight read
// 1.05-1.25x the minimum and 4 1.5-1.7x for 3% more requests ended:
// flooded, the limit holds 3 in 85-92% of the intervals (17-66% when any
// gain kept a growth: TestLimitDoesNotOvershootOnTwoCPUs), while 4 and 10
// varied workers still get 90% of their capacity
// (TestGrowthJudgedSparesParallelBackends).
//
// The minimum RT is measured anew by probes: the limit drops until the
// requests in flight have ended (about the recent RT) and two intervals
// more, whose lowest recent RT becomes the minimum after congestion (a
// service slower for good); a periodic probe's only lowers it. The first
// probe drops it to MinLimit; later ones to 0.9/Tolerance of it, or of the
// most requests in flight in the last interval when fewer (at least
// MinLimit). When a probe's RT, higher than the minimum, fell in proportion
// to the requests in flight (within 1.2x), they queued at its limit too: its
// RT is no minimum, the limit falls to at most Tolerance times the probe's,
// and the next probe, five intervals on, goes under it; so probes reach the
// backend's real parallelism, not a queue above it. A probe comes when
// MinRTIntervals intervals in a row were congested (recent RT above
// Tolerance times the minimum: queueing, or a service slower for good), and
// periodically, in an interval whose requests fill the limit, as most
// intervals since the last probe did (a queue does; a load the service
// carries fills it only in a burst now and then): after 5 intervals, then
// twice as many each time, up to ProbeInterval. Outside probes, the minimum
// falls to the average RT of an interval of 8 requests ended or more, or of
// 32 ended in intervals of fewer: the average of fewer varies too much, and
// its lowest fell under what the service takes, so that the limit shrank at
// a load the service carries (TestMinimumFallsOnAFewRequestsAnInterval,
// TestLimitStaysBoundedOnASlowVariedService). So probes refuse no more than
// 10% of the requests of any half second of a load the service carries (0.5
// and 0.7 times the capacity of services of 2, 10 and 100 workers, after the
// first two seconds: core's TestAdaptiveProbesRefuseLittle).
//
// MinLimit defaults to 2: a backend of 2 workers (a CPU-bound service on 2
// CPUs) then keeps 3 in flight under overload, 1 waiting.
//
// The guarantee, on the fake clock: against a backend of 2 workers of 20ms
// (100 requests/s), open loop at a fixed rate of 1x, 2x, 5x and 10x its
// capacity, 1s deadline, the controller with the defaults serves at least
// 90% of the capacity (measured 100%) with a p99 latency at most 3x the
// unloaded one (measured 1.0x, 1.8x, 1.9x, 1.9x): core's
// TestCapacityUnderOpenLoad (go test -run CapacityUnderOpenLoad -v ./core/),
// which holds the cpu system rule with the BBR check to the same. With the
// service time varying at random around 20ms or 60ms (lognormal, coefficient
// of variation 0.5 and 1, as on a host other processes keep busy), it serves
// 85-101% of the capacity with a p99 of 0.9-1.8x the unloaded one (at least
// 85% and at most 3x are required); as 2 CPUs that compute 20ms a request, a
// request waiting to reach the rule until a CPU frees or ends a 10ms or 15ms
// slice, 96-101% with a p99 of 1.0-2.7x (at most 2.8x required; 20ms:
// 3.2-3.8x, where 4 in flight read 1.5x the minimum, within the tolerance):
// go test -run CapacityUnderOpenLoad -v ./core/internal/adaptive. On the
// real CPU-bound backend, examples/overload's doc has the figures and the
// command (-samples writes the limit, recent and minimum RT every 100ms);
// the p99 there also holds the server's wait before a request reaches the
// rule (about a 10ms scheduler slice on an idle host), which no limit
// shortens. There, on the idle host (two runs, 2026-11-29 03:56 and 03:59
// UTC), the rule served 90-98% of the capacity at every load with a p99 of
// 2.4-3.0x the unloaded one, holding 3-4 in flight (four earlier runs,
// before the overload judge: 93-100%, 1.6-3.3x, over 3x in 2 of 16 rows).
//
// Every request writes the count in flight, one atomic shared by all CPUs so
// that the limit is exact, and the count and total RT of the requests ended:
// 21ns a request alone, 41-45ns with two CPUs at it (BenchmarkAcquireDone,
// go test -run '^$' -bench AcquireDone ./core/internal/adaptive/, 2026-11-29).
package adaptive
