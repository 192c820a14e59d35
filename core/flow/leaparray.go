package flow

import (
	"sync/atomic"
	"time"

	"github.com/sluicekit/sluice/core/window"
)

// leapArray admits while the pass count of the sliding window, kept in a
// window.LeapArray, stays within the limit: reserve in the current bucket,
// sum the window, undo when over.
type leapArray struct {
	cfg Config
	th  threshold
	arr *window.LeapArray
	// older caches the pass count of the buckets of the window before the
	// newest one, so that a decision reads two counts instead of summing
	// every bucket. Those buckets only change afterwards by an Undo (a
	// reservation given back), which makes the cached sum too high until
	// the next bucket: a decision may then reject early, never admit
	// beyond the limit.
	older atomic.Pointer[olderSum]
}

// olderSum is the pass count of the buckets of the window of the bucket
// starting at start, that bucket excluded.
type olderSum struct{ start, sum int64 }

func newLeapArray(cfg Config, th threshold, prev Limiter) (*leapArray, error) {
	if p, ok := prev.(*leapArray); ok && p.cfg.Window == cfg.Window && p.cfg.Buckets == cfg.Buckets {
		return &leapArray{cfg: cfg, th: th, arr: p.arr}, nil
	}
	arr, err := window.New(cfg.Buckets, cfg.Window)
	if err != nil {
		return nil, err
	}
	return &leapArray{cfg: cfg, th: th, arr: arr}, nil
}

func (l *leapArray) Config() Config        { return l.cfg }
func (l *leapArray) warmState() *warmState { return warmStateOf(l.th) }

func (l *leapArray) Acquire(now int64, n int64) Decision {
	lim := l.th.at(now)
	b := l.arr.Add(now, window.Pass, n)
	sum := l.sum(b)
	for l.arr.Newest() > b.Start() {
		// The window moved on while we summed: the oldest bucket of ours
		// may have been replaced, its count missed, before we read it, and
		// a newer bucket may hold reservations we did not count. Decide
		// again in the newest bucket. This happens only when a bucket
		// boundary falls inside the decision.
		l.arr.Undo(b, window.Pass, n)
		b = l.arr.Add(now, window.Pass, n)
		sum = l.sum(b)
	}
	if sum <= lim {
		l.th.admitted(n)
		return Decision{OK: true, Limit: lim, Remaining: lim - sum, ref: b}
	}
	l.arr.Undo(b, window.Pass, n)
	return Decision{Limit: lim, Remaining: max(lim-(sum-n), 0), RetryAfter: l.retryAfter(now, sum-n, n, lim)}
}

// sum returns the pass count of the window ending with bucket b, which the
// caller checks is the newest bucket after the call. The older buckets' sum
// is computed once per bucket: b is installed only after Newest reached its
// start, so a reservation made in an older bucket and not seen by that sum
// was made before its maker read Newest, who then saw b and decided again
// in b.
func (l *leapArray) sum(b *window.Bucket) int64 {
	ws := b.Start()
	if o := l.older.Load(); o != nil && o.start == ws {
		return o.sum + b.Get(window.Pass)
	}
	older := l.arr.SumBetween(ws-int64(l.cfg.Window), ws, window.Pass)
	l.older.Store(&olderSum{start: ws, sum: older})
	return older + b.Get(window.Pass)
}

// retryAfter returns how long until enough of the window's count used has
// left it for n more to fit under lim.
func (l *leapArray) retryAfter(now, used, n, lim int64) time.Duration {
	if n > lim {
		return l.cfg.Window
	}
	var wait int64
	l.arr.Each(now, func(b *window.Bucket) {
		if used+n > lim {
			used -= b.Get(window.Pass)
			wait = b.Start() + int64(l.cfg.Window) - now
		}
	})
	return time.Duration(max(wait, 0))
}

func (l *leapArray) Undo(d Decision, n int64) {
	if b, ok := d.ref.(*window.Bucket); ok {
		l.arr.Undo(b, window.Pass, n)
	}
}

// Array returns the leap array the limiter counts in.
func (l *leapArray) Array() *window.LeapArray { return l.arr }
