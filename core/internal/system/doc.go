// Package system is the engine of core's system rules (kind system): the
// limiter of one rule, which decides on the rule's own statistics of the
// requests it admits (in flight, pass rate, response times) and on a host
// signal (CPU usage, load average) that a Sampler reads off the request
// path, from a Source: Host reads the machine's or the container's.
//
// It is internal to sluice: users write rules of kind system (core.Rule's
// Signal, Threshold and Strategy fields) and give a Guard their own source
// with core.WithSystemSource.
package system
