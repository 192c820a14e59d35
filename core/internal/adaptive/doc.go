// Package adaptive is the controller of adaptive concurrency rules: a limit
// on requests in flight that it finds from their response times, with no
// capacity given.
//
// The controller compares, once per Interval, the average response time of
// the requests that ended in it (the recent RT) with the lowest seen (the
// minimum RT, what the service takes when nothing queues). While the
// recent RT stays within halfway to Tolerance times the minimum (1.25x by
// default) the limit grows by its square root per interval, as long as
// requests use more than half of it; up to Tolerance times it holds, so
// that it does not swing around the point where requests begin to queue;
// beyond, it shrinks towards the limit times Tolerance times the minimum
// over the recent RT (at most halving it), smoothed. Requests then queue
// for about a quarter to a half of a service time. The limit stays within
// [MinLimit, MaxLimit].
//
// The minimum RT is measured anew by probes: the limit drops until the
// requests in flight have ended (about the recent RT) and two intervals
// more, whose lowest recent RT becomes the minimum. The first probe drops
// it to MinLimit; later ones to 0.9/Tolerance of it, or of the most
// requests in flight in the last interval when fewer (at least MinLimit):
// where nothing queues if the minimum was right, else a minimum at most
// 0.9 times the last, while the requests in flight a busy service needs
// go on. A probe comes when MinRTIntervals intervals in a row were
// congested (recent RT above Tolerance times the minimum: queueing, or a
// service slower for good), and periodically, in an interval whose
// requests fill the limit, as most intervals since the last probe did (a
// queue does; a load the service carries fills it only in a burst now and
// then): after 5 intervals (the first minimum may have been measured under
// load), then twice as many each time, up to ProbeInterval. So probes
// refuse no more than 10% of the requests of any half second of a load
// the service carries (0.5 and 0.7 times the capacity of services of 2,
// 10 and 100 workers, after the first two seconds, in which a load of more
// than the initial 20 in flight is refused in part while the limit grows:
// core's TestAdaptiveProbesRefuseLittle).
//
// Against a backend of 2 workers, open loop at a fixed rate of 1x, 2x, 5x
// and 10x its capacity with a 1s deadline, simulated on the fake clock
// (TestCapacityUnderOpenLoad: go test -run CapacityUnderOpenLoad -v
// ./core/internal/adaptive), the controller with the defaults serves
// 88-104% of the capacity at every load, whether each request takes a
// constant 20ms or a time varying at random around 20ms or 60ms (as on a
// host other processes keep busy): at least 85% is required. Its p99
// latency is not within 3x the unloaded one at every load: 4-6x at 2x-10x
// with a constant 20ms, because probes stop at MinLimit (4), above the 2
// workers, so that the minimum response time they find includes a queue.
//
// Every request writes the controller's count of requests in flight, one
// atomic shared by all CPUs, so that the limit is exact (reserve, then
// check), and the count and total response time of the requests ended.
// These contend: with two CPUs at it (BenchmarkAcquireDone), a request
// costs no less than serially, 10-20ns on a loaded 2-core machine, about a
// tenth of an Enter and Exit. Spreading the counts of ended requests over a
// cache line per CPU made no difference measurable there, and the count in
// flight cannot be spread without loosening the limit, so they stay shared.
package adaptive
