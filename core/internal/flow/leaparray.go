package flow

import (
	"math"
	"sort"
	"sync/atomic"
	"time"

	"github.com/sluicekit/sluice/core/internal/window"
	"github.com/sluicekit/sluice/core/stripe"
)

// leapArray admits while the pass count of the sliding window, kept in a
// window.LeapArray, stays within the limit: reserve in the current bucket,
// sum the window, undo when over. CPUs lease shares of a large quota left.
type leapArray struct {
	base
	arr *window.LeapArray
	// older caches the pass count of the window's buckets before the
	// newest, so that a decision reads two counts instead of every bucket.
	// An Undo in them leaves it too high until the next bucket: a decision
	// may then reject early, never admit beyond the limit.
	older  atomic.Pointer[olderSum]
	leases []lease // one per stripe; nil when the limit warms up
}

// olderSum is the pass count of the window of the bucket starting at
// start, that bucket excluded. left is built on the first rejection in
// that bucket, for retryAfter: left[k] is what those buckets held after
// the oldest k+1 of them leave the window, never an understatement (they
// only lose counts afterwards).
type olderSum struct {
	start, sum int64
	left       atomic.Pointer[[]int64]
}

func newLeapArray(b base, prev Limiter) (*leapArray, error) {
	l, cfg := &leapArray{base: b}, b.cfg
	if b.warm == nil {
		l.leases = make([]lease, stripe.Count())
	}
	p, ok := prev.(*leapArray)
	if ok {
		// What is left of the old limiter's leases goes back to its window,
		// whose counts carry over.
		for i := range p.leases {
			p.giveBackLeft(p.leases[i].end())
		}
		if p.cfg.Window == cfg.Window && p.cfg.Buckets == cfg.Buckets {
			l.arr = p.arr
			return l, nil
		}
	}
	arr, err := window.New(cfg.Buckets, cfg.Window)
	if err != nil {
		return nil, err
	}
	if ok && p.arr.Newest() != math.MinInt64 {
		// Each old bucket's count at its last nanosecond, oldest first (see
		// New): counts older than the new window drop out as arr moves on.
		bl := int64(p.arr.BucketLen())
		p.arr.Each(p.arr.Newest(), func(b *window.Bucket) {
			if c := b.Get(window.Pass); c > 0 {
				arr.Add(b.Start()+bl-1, window.Pass, c)
			}
		})
	}
	l.arr = arr
	return l, nil
}

// refill decides n permits at now that the lease ls, whose word was w,
// did not serve. An empty lease gives nothing back: when the window is
// full, the request is rejected without claiming the lease (a flood of
// rejections writes nothing). Otherwise refill replaces the lease: it
// gives back what the old lease had left and decides n on the window,
// with a share of the quota left for a new lease when that allows one (in
// one reservation; n alone when they do not fit together).
func (l *leapArray) refill(d *Decision, ls *lease, w, now, n int64) {
	if lim, used := l.cfg.Limit, l.sum(l.arr.Current(now)); w&leaseLeft == 0 && (n > lim || used+n > lim) {
		*d = l.rejected(now, used, n, lim)
		return
	}
	w, ok := ls.claim()
	if !ok {
		*d = l.Acquire(now, n) // another refill of this lease is under way
		return
	}
	l.giveBackLeft(w&leaseLeft, ls.tag.Load())
	chunk := stripe.LeaseSize(l.cfg.Limit-l.sum(l.arr.Current(now))-n, len(l.leases))
	if *d = l.Acquire(now, n+chunk); !d.OK && chunk > 0 {
		chunk, *d = 0, l.Acquire(now, n)
	}
	if !d.OK {
		chunk = 0
	} else if chunk > 0 {
		d.Remaining, d.Next = d.Remaining+chunk, 0 // the lease's permits are left
	}
	ls.renew(w, chunk, d.mark)
}

// giveBackLeft takes left permits of a lease out of the count of its
// bucket, starting at start, if it is still in the window, and drops the
// cached older sum, which the bucket may be part of.
func (l *leapArray) giveBackLeft(left, start int64) {
	if left > 0 {
		l.arr.UndoAt(start, window.Pass, left)
		l.older.Store(nil)
	}
}

func (l *leapArray) Acquire(now int64, n int64) Decision {
	lim := l.limitAt(now)
	if used := l.sum(l.arr.Current(now)); n > lim || used+n > lim {
		// Full without the n: rejected without writing the bucket's
		// count, which would move its cache line to this CPU and back.
		return l.rejected(now, used, n, lim)
	}
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
		l.admitted(n)
		d := Decision{OK: true, Limit: lim, Remaining: lim - sum, mark: b.Start()}
		if d.Remaining == 0 {
			d.Next = l.retryAfter(now, sum, 1, lim)
		}
		return d
	}
	l.arr.Undo(b, window.Pass, n)
	return l.rejected(now, sum-n, n, lim)
}

// rejected returns the decision rejecting n requests at now with used of
// lim taken in the window.
func (l *leapArray) rejected(now, used, n, lim int64) Decision {
	return Decision{Limit: lim, Remaining: max(lim-used, 0), RetryAfter: l.retryAfter(now, used, n, lim)}
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
// left it for n more to fit under lim, reading the older buckets' counts
// once per bucket (olderSum.left) and the newest bucket's afresh.
func (l *leapArray) retryAfter(now, used, n, lim int64) time.Duration {
	if n > lim {
		return l.cfg.Window
	}
	b := l.arr.Current(now)
	ws := b.Start()
	o := l.older.Load()
	if o == nil || o.start != ws || now < ws {
		return l.retryAfterEach(now, used, n, lim)
	}
	left := o.left.Load()
	if left == nil {
		left = l.leftAfter(ws)
		o.left.Store(left)
	}
	// The first older bucket whose leaving makes room; the newest bucket
	// itself when none does. used exceeded lim, so at least one must go.
	room := lim - n - b.Get(window.Pass)
	k := sort.Search(len(*left), func(k int) bool { return (*left)[k] <= room })
	bl := int64(l.arr.BucketLen())
	start := ws - int64(len(*left)-k)*bl
	return time.Duration(max(start+int64(l.cfg.Window)-now, 0))
}

// leftAfter returns, for the window of the bucket starting at ws, the pass
// count of its older buckets that stays in the window after the oldest k+1
// leave it, for each k.
func (l *leapArray) leftAfter(ws int64) *[]int64 {
	bl := int64(l.arr.BucketLen())
	left := make([]int64, l.arr.Buckets()-1)
	var sum int64
	for k := len(left) - 1; k >= 0; k-- {
		left[k] = sum
		sum += l.arr.Count(ws-int64(len(left)-k)*bl, window.Pass)
	}
	return &left
}

// retryAfterEach is retryAfter reading every bucket of the window at now,
// for a decision outside the newest bucket.
func (l *leapArray) retryAfterEach(now, used, n, lim int64) time.Duration {
	var wait int64
	l.arr.Each(now, func(b *window.Bucket) {
		if used+n > lim {
			used -= b.Get(window.Pass)
			wait = b.Start() + int64(l.cfg.Window) - now
		}
	})
	return time.Duration(max(wait, 0))
}

// Undo takes n permits out of d's bucket (its mark), if still installed.
func (l *leapArray) Undo(d Decision, n int64) {
	if d.OK {
		l.arr.UndoAt(d.mark, window.Pass, n)
		l.undone(n)
	}
}

// Array returns the leap array the limiter counts in.
func (l *leapArray) Array() *window.LeapArray { return l.arr }
