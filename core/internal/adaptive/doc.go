// Package adaptive is the controller of adaptive concurrency rules: a limit
// on requests in flight that it finds from their response times, with no
// capacity given.
//
// The controller compares, once per Interval, the average response time of
// the requests that ended in it (the recent RT) with the lowest such average
// of the last MinRTIntervals intervals (the minimum RT, what the service
// takes when nothing queues). While the recent RT stays within Tolerance
// times the minimum the limit grows by about its square root per interval,
// as long as requests use more than half of it; beyond, it shrinks in
// proportion (a gradient, at most halving it), smoothed. The limit stays within [MinLimit, MaxLimit]. The minimum RT forgets
// intervals older than MinRTIntervals, so that a service that became slower
// for good gets a new baseline instead of being throttled to MinLimit.
package adaptive
