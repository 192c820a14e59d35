package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sluicekit/sluice/core/internal/flow"
	"github.com/sluicekit/sluice/core/internal/rulefields"
)

// Mode is how a shared limit is decided.
type Mode string

// The modes of a shared limit.
const (
	// Exact decides every request in the store, in one round trip: the
	// limit holds exactly across instances.
	Exact Mode = "exact"
	// Approximate decides every request locally and synchronizes counts
	// with the store periodically: nanoseconds per decision, and an
	// overshoot bounded by what the instances admit in one sync period.
	Approximate Mode = "approximate"
)

// Algorithm names a rate algorithm as a rules file does ("token-bucket").
// A Store supports the three constants below; core.Algorithm is this type,
// with the constants of every algorithm of a rule.
type Algorithm string

// The algorithms a Store supports.
const (
	SlidingCounter = Algorithm(flow.SlidingCounter)
	TokenBucket    = Algorithm(flow.TokenBucket)
	LeakyBucket    = Algorithm(flow.LeakyBucket)
)

// Decision is the outcome of Store.Take, which a Guard reports and passes
// back to Undo unchanged when a later rule rejects the request.
type Decision struct {
	// OK reports whether the requests are admitted.
	OK bool
	// Wait is, for admitted requests of a leaky bucket, how long they
	// wait for their turn before they proceed; 0 otherwise.
	Wait time.Duration
	// Limit is the limit in force at the decision.
	Limit int64
	// Remaining is the quota left after the decision: how many more
	// requests of one could be admitted right now.
	Remaining int64
	// RetryAfter is, for rejected requests, the time after which the same
	// requests would be admitted if nothing else arrived; 0 when admitted.
	RetryAfter time.Duration
	// Next is, for admitted requests that leave no quota (Remaining 0),
	// the time after which a next request of one would be admitted: the
	// RetryAfter of a request of one rejected right after them, which the
	// Guard reports as the quota's reset; 0 otherwise (the Guard then
	// reports the window, or the bucket's refill time).
	Next time.Duration
	// Ref and Mark are the Store's own record of an admitted decision,
	// for its Undo: the Guard keeps them and passes them back unchanged,
	// reading nothing of them. NewMemory keeps its limiter's window there
	// (Ref) or a bucket's slot (Mark); Bucket keeps the slot in Mark.
	Ref  any
	Mark [2]int64
}

// setFlow sets d to a flow limiter's decision f, field by field: a
// decision is on the path of every approximate Take, and the copy of a
// struct just written field by field stalls on reading it back.
func (d *Decision) setFlow(f *flow.Decision) {
	ref, mark, frac := f.UndoState()
	d.OK, d.Wait, d.Limit, d.Remaining, d.RetryAfter, d.Next = f.OK, f.Wait, f.Limit, f.Remaining, f.RetryAfter, f.Next
	d.Ref, d.Mark[0], d.Mark[1] = ref, mark, frac
}

// flow returns the flow limiter's decision that d was made of (setFlow).
func (d *Decision) flow() (f flow.Decision) {
	f.OK, f.Wait, f.Limit, f.Remaining, f.RetryAfter, f.Next = d.OK, d.Wait, d.Limit, d.Remaining, d.RetryAfter, d.Next
	f.SetUndoState(d.Ref, d.Mark[0], d.Mark[1])
	return f
}

// Limit describes one limit kept in a Store.
type Limit struct {
	// Algorithm is SlidingCounter, TokenBucket or LeakyBucket.
	Algorithm Algorithm
	Limit     int64         // requests per Window
	Window    time.Duration // > 0, at most 30 days
	Burst     int64         // token bucket: tokens above Limit
	MaxWait   time.Duration // leaky bucket: the longest a request may wait for its turn, at most 30 days
	Mode      Mode          // default Exact
}

// Validate returns an error naming the first field of l that a Store cannot
// use, or nil: the bounds of a store, and what a flow rule of the same
// fields rejects (a negative field, a burst or maxWait with another
// algorithm, a bucket faster than one request per nanosecond).
func (l Limit) Validate() error {
	switch {
	case l.Algorithm != SlidingCounter && l.Algorithm != TokenBucket && l.Algorithm != LeakyBucket:
		return fmt.Errorf("algorithm must be sliding-counter, token-bucket or leaky-bucket with a store, got %q", l.Algorithm)
	case l.Window <= 0: // flow.Config would take its default
		return fmt.Errorf("window must be > 0, got %s", l.Window)
	case l.Window > flow.MaxStoreWindow || l.MaxWait > flow.MaxStoreWindow:
		return fmt.Errorf("window and maxWait must be <= %s with a store, got %s and %s", flow.MaxStoreWindow, l.Window, l.MaxWait)
	case l.Mode != "" && l.Mode != Exact && l.Mode != Approximate:
		return fmt.Errorf("mode must be exact or approximate, got %q", l.Mode)
	}
	if l.Algorithm != SlidingCounter {
		if largest, ok := flow.BucketLimitOK(l.Limit, l.Window); !ok {
			return fmt.Errorf("limit %s", flow.BucketLimitProblem(largest, l.Limit, l.Window))
		}
	}
	cfg := flow.Config{Algorithm: flow.Algorithm(l.Algorithm), Limit: l.Limit, Window: l.Window, Burst: l.Burst, MaxWait: l.MaxWait}
	return rulefields.Join(cfg.Validate())
}

// Store keeps limits that several Guards (usually in several processes)
// share. Keys name one limit each: the Guard passes the rule's name, or for
// a hotspot rule the rule's name and a hash of the value; a Store adds its
// own prefix. A Store is safe for concurrent use.
//
// Take and Undo return an error when the store could not decide (it is
// unreachable, too slow, or answered nonsense): the Guard then applies the
// rule's failure policy. They never block longer than the Store's own
// timeout, or than ctx allows.
type Store interface {
	// Take asks the limit lim kept under key to admit n requests, on the
	// store's own clock. The decision has OK, Limit, Remaining,
	// RetryAfter, Next, and for a leaky bucket the Wait before the
	// request's turn.
	Take(ctx context.Context, key string, lim Limit, n int64) (Decision, error)
	// Undo gives back the n requests of an admitted decision d of Take,
	// when a later rule rejected the request: best effort.
	Undo(ctx context.Context, key string, lim Limit, d Decision, n int64) error
	// Close releases the Store's resources and stops its goroutines.
	Close() error
}

// ErrUnavailable is the error a Store returns, wrapped, when it cannot reach
// its backend; errors.Is(err, ErrUnavailable).
var ErrUnavailable = errors.New("store unavailable")

// ErrKeyUnavailable is the error a Store returns, wrapped with
// ErrUnavailable, when it cannot decide one key now though it is not
// failing: an approximate limit whose shared counts it never read, during
// a failure of its backend shorter than the time it keeps deciding on
// stale counts; a memory store full of keys whose counts all still matter.
// The Guard applies the rule's failure policy to the request without
// counting a failure of the store.
var ErrKeyUnavailable = errors.New("key not kept")
