// Package adaptive is the controller of adaptive concurrency rules: a limit
// on requests in flight that it finds from their response times, with no
// capacity given.
//
// The controller compares, once per Interval, the average response time of
// the requests that ended in it (the recent RT) with the lowest seen (the
// minimum RT, what the service takes when nothing queues). While the
// recent RT stays within Tolerance times the minimum the limit grows by
// its square root per interval, as long as requests use more than half of
// it; beyond, it shrinks in proportion (a gradient, at most halving it),
// smoothed. The limit stays within [MinLimit, MaxLimit].
//
// The minimum RT is measured anew by probes: the limit drops to MinLimit
// for two intervals, whose lowest recent RT becomes the minimum. A probe
// comes when MinRTIntervals intervals in a row were congested (recent RT
// above Tolerance times the minimum: queueing, or a service slower for
// good), and periodically, after MinRTIntervals intervals, then twice as
// many each time, up to 16 times as many: the first minimum may have been
// measured under load.
package adaptive
