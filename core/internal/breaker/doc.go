// Package breaker implements circuit breakers: a Breaker watches the
// outcomes of the requests it lets through and, when too many are slow or
// fail, rejects every request for a while, so that a failing dependency is
// given time to recover instead of more load.
//
// A Breaker is closed, open or half-open, as core's package doc (Circuit
// breakers) says. Its Strategy (see package core/breaker) says what a bad
// outcome is, over the last Window, kept in leap arrays of the breaker's
// own (package window). A good outcome can never trip a breaker, so DoneOn
// does the window sums only for bad ones.
//
// Unlike Sentinel's breakers, a half-open breaker counts only the outcomes
// of its own probes (each request carries a Ticket naming the period it was
// let through in), a probe that a later rule rejected is given back
// (Undo), a probe that hangs does not keep the breaker half-open forever,
// and outcomes of requests let through before a transition never count
// after it.
//
// Every time is an int64 of nanoseconds on the caller's clock, as in the
// rest of sluice, so tests drive a breaker with tables of timestamps.
// Rules of kind breaker (core.KindBreaker) make breakers for a Guard.
//
// The package is internal to core; package breaker (core/breaker) holds
// the names users see, which this package aliases.
package breaker
