// Package worker runs the goroutines a Guard owns (its history recorder,
// the watch on unmatched rules, the sampler of host signals, the reporter
// of breaker changes and logs): one at a time per Worker, restarted when
// what it works on changes, stopped and waited for by Close. Sleep waits on
// a Guard's clock without becoming a sleeper of a fake one.
package worker
