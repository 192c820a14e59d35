package core

import (
	"errors"
	"fmt"
	"time"
)

// ErrBlocked is the error every BlockedError matches with errors.Is.
var ErrBlocked = errors.New("sluice: blocked")

// BlockedError is the error Enter returns when a rule rejects a request. It
// carries what an adapter puts in the response: the rule, its limit, the
// quota left and when to retry.
type BlockedError struct {
	Resource string // the resource entered
	Rule     string // the name of the rule that rejected the request
	Kind     Kind   // that rule's kind
	Param    string // for hotspot rules, the param limited (Rule.Param)
	// Limit is the rule's limit in force (requests per Window, or in flight
	// for concurrency).
	Limit int64
	// Window is the period of Limit; 0 for concurrency limits (of kind
	// concurrency, or hotspot with algorithm concurrency).
	Window time.Duration
	// Remaining is the quota left at the decision.
	Remaining int64
	// RetryAfter is the earliest time after which the same request would
	// pass if nothing else arrived. It is 0 for concurrency limits, which
	// free a slot whenever a request in flight ends. For a breaker (Kind
	// KindBreaker; Limit, Window and Remaining 0) it is the time until the
	// breaker lets probes through, or, while it is half-open with every
	// probe out, until the probes' deadline.
	RetryAfter time.Duration
	// Fallback is true when the rule keeps its counts in a store that
	// failed, and the rejection is its failure policy's (closed, or the
	// local limit): see Guard.Stores.
	Fallback bool
}

// Error describes the block.
func (e *BlockedError) Error() string {
	if e.Kind == KindBreaker {
		return fmt.Sprintf("sluice: %s blocked by breaker rule %q: circuit open, retry after %s", e.Resource, e.Rule, e.RetryAfter)
	}
	if e.Window == 0 {
		return fmt.Sprintf("sluice: %s blocked by %s rule %q: %d in flight", e.Resource, e.Kind, e.Rule, e.Limit)
	}
	return fmt.Sprintf("sluice: %s blocked by %s rule %q: limit %d per %s, retry after %s",
		e.Resource, e.Kind, e.Rule, e.Limit, e.Window, e.RetryAfter)
}

// Is reports whether target is ErrBlocked.
func (e *BlockedError) Is(target error) bool { return target == ErrBlocked }
