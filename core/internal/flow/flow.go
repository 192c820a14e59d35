package flow

import (
	"math/bits"
	"time"

	"github.com/sluicekit/sluice/core/internal/rulefields"
	"github.com/sluicekit/sluice/core/stripe"
)

// Decision is the outcome of Limiter.Acquire. Its exported fields mean
// what those of store.Decision, which a Store copies them to, do; Limit is
// lower than Config.Limit while a limit warms up.
type Decision struct {
	OK               bool
	Wait             time.Duration
	Limit, Remaining int64
	RetryAfter, Next time.Duration

	ref      any   // algorithm state the reservation was made in, for Undo
	mark     int64 // algorithm value of the reservation, for Undo
	markFrac int64 // the fraction of a nanosecond of a bucket's mark
}

// Limiter is one flow limit. Acquire admits or rejects n requests at now (in
// nanoseconds of the Guard's clock); Undo gives back an admitted reservation
// that was not used because another rule rejected the request or its wait
// was cancelled. Both are safe for concurrent use.
type Limiter interface {
	Acquire(now int64, n int64) Decision
	Undo(d Decision, n int64)
	// Config returns the Limiter's configuration, defaults applied.
	Config() Config
}

// AcquireTo is l.Acquire writing every field of the decision to d, which
// saves the Guard's pass path the copy of a returned one (the limiters are
// called by their type, so that d does not escape). cpu is the same number
// for callers on one CPU and different for callers on different ones: a
// LeapArray limiter serves it from a lease of that CPU (see the package
// doc). Limits hold whatever cpu is; only speed depends on it. Without
// quota, an admitted decision's Remaining and Next may be left 0.
func AcquireTo(l Limiter, d *Decision, cpu uint32, now, n int64, quota bool) {
	switch l := l.(type) {
	case *leapArray: // in place, a call fewer on a request's pass
		if l.leases == nil {
			*d = l.Acquire(now, n)
			return
		}
		// A lease of cpu serves n permits while its bucket (its tag) is the
		// newest and holds now: Current's, known without the call.
		ls := &l.leases[stripe.Of(cpu, len(l.leases))]
		w := ls.word.Load()
		if tag := ls.tag.Load(); w&leaseLeft >= n && uint64(now-tag) < uint64(l.arr.BucketLen()) && l.arr.Newest() == tag &&
			ls.word.CompareAndSwap(w, w-n) {
			lim := l.cfg.Limit
			*d = Decision{OK: true, Limit: lim, mark: tag}
			if quota { // the window's quota left, plus the lease's
				b := l.arr.Current(now)
				if d.Remaining = max(lim-l.sum(b), 0) + w&leaseLeft - n; d.Remaining == 0 {
					d.Next = l.retryAfter(now, l.sum(b), 1, lim)
				}
			}
			return
		}
		l.refill(d, ls, w, now, n)
	case *gcra:
		l.AcquireTo(d, now, n)
	default:
		*d = l.Acquire(now, n)
	}
}

// New returns a Limiter for cfg. When prev is the Limiter of the same rule
// before a rule reload, its state is carried over, so a reload does not
// reset the limit: a window's counts (shared when the window and buckets
// are unchanged, between a fixed window and a sliding counter too; else
// each old bucket's count is replayed at its bucket's last nanosecond into
// the new shape, so it leaves the new window no earlier than its requests
// would have, the new window's time running ahead of the clock by less
// than an old bucket; a switch between a leap array, a sliding log and the
// counters starts afresh), a sliding log's timestamps, a bucket's TAT
// (token or leaky) with in-flight waiters' slots, and warm-up heat.
// Admissions the old Limiter makes after a replay, by requests that read
// the rules before the reload, are not in the new window. New keeps a
// bucket's TAT, the time it needs to refill; Reload, given the time, keeps
// the requests it owes instead when its cost per request (Window/Limit)
// changes: its debt TAT-now is converted, rounded up to the new fraction,
// whatever the new capacity, so a spent bucket stays spent after a longer
// window or a reload reverted, and a raised limit gives only the
// difference (go test -run TestReload ./core/internal/flow).
func New(cfg Config, prev Limiter) (Limiter, error) {
	cfg = cfg.WithDefaults()
	if err := rulefields.Join(cfg.Validate()); err != nil {
		return nil, err
	}
	b := base{cfg: cfg}
	if cfg.Warmup > 0 {
		b.warm = newWarmup(cfg, prev)
	}
	switch cfg.Algorithm {
	case LeapArray:
		return newLeapArray(b, prev)
	case FixedWindow, SlidingCounter:
		return newCounter(b, prev), nil
	case SlidingLog:
		return newSlidingLog(b, prev), nil
	default: // TokenBucket, LeakyBucket: Validate rejected anything else
		return newGCRA(b, prev), nil
	}
}

// base is what every Limiter holds: its Config and its warm-up, if any.
type base struct {
	cfg  Config
	warm *warmup
}

func (b *base) Config() Config { return b.cfg }

// limitAt returns the limit in force at now: the configured one, or the
// warm-up ramp's.
func (b *base) limitAt(now int64) int64 {
	if b.warm == nil {
		return b.cfg.Limit
	}
	return b.warm.at(now)
}

func (b *base) admitted(n int64) {
	if b.warm != nil {
		b.warm.state.admitted.Add(n)
	}
}

// undone takes n admitted requests given back (Undo) out of the traffic
// that warms the limit up: a request another rule rejected must not warm it.
func (b *base) undone(n int64) { b.admitted(-n) }

// common returns b, for a reload to carry its warm-up over.
func (b *base) common() *base { return b }

// reciprocal returns floor(num*2^64/den) when 0 <= num < den, else 0: for
// x < 2^63, x times it over 2^64 lies within 1 below x*num/den, and turns
// time into requests without a division (GCRA.remaining).
func reciprocal(num, den int64) uint64 {
	if num < 0 || den <= 0 || num >= den {
		return 0
	}
	r, _ := bits.Div64(uint64(num), 0, uint64(den))
	return r
}

// Mark returns the TAT after an admitted bucket decision: the end of its
// slot.
func (d Decision) Mark() Instant { return Instant{d.mark, d.markFrac} }

// UndoState returns what Undo reads of d besides its exported fields:
// store.Decision carries it, opaque, from a Take to its Undo.
func (d *Decision) UndoState() (ref any, mark, markFrac int64) { return d.ref, d.mark, d.markFrac }

// SetUndoState sets the state UndoState returned.
func (d *Decision) SetUndoState(ref any, mark, markFrac int64) {
	d.ref, d.mark, d.markFrac = ref, mark, markFrac
}
