// Package adaptive is the controller of adaptive concurrency rules: a limit
// on requests in flight that it finds from their response times, with no
// capacity given.
//
// The controller compares, once per Interval, the average response time of
// the requests that ended in it (the recent RT) with the lowest seen (the
// minimum RT, what the service takes when nothing queues). While the
// recent RT stays within Tolerance times the minimum the limit grows by
// its square root per interval, as long as requests use more than half of
// it; beyond, it shrinks towards the limit times Tolerance times the
// minimum over the recent RT (at most halving it), smoothed, so that
// requests queue for at most about Tolerance-1 service times. The limit
// stays within [MinLimit, MaxLimit].
//
// The minimum RT is measured anew by probes: the limit drops to MinLimit
// until the requests in flight have ended (about the recent RT) and two
// intervals more, whose lowest recent RT becomes the minimum. A probe
// comes when MinRTIntervals intervals in a row were congested (recent RT
// above Tolerance times the minimum: queueing, or a service slower for
// good), and periodically, in an interval whose requests use the limit:
// first after 5 intervals (the first minimum may have been measured under
// load), then after MinRTIntervals, then twice as many each time, up to
// ProbeInterval.
package adaptive
