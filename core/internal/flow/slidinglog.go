package flow

import (
	"math"
	"slices"
	"sort"
	"sync"
	"time"
)

// slidingLog keeps the times of the last Limit admissions in a ring, oldest
// first. A request of n fits when the (lim-n+1)-th newest admission has left
// the window.
type slidingLog struct {
	base
	mu   sync.Mutex // guards the fields below
	ring []int64    // admission times, ascending from head; math.MinInt64 when unused
	head int        // index of the oldest entry
	seq  int64      // number of admissions written, for Undo
	last int64      // latest time seen; earlier readings are treated as this one
	cut  []int64    // older admissions a reload's smaller limit left out, ascending: read by the next reload only
}

// newSlidingLog keeps prev's admissions still in the window: the newest in
// the ring, as many as fit, the others in cut.
func newSlidingLog(b base, prev Limiter) *slidingLog {
	l, kept := &slidingLog{base: b, last: math.MinInt64}, []int64(nil)
	if p, ok := prev.(*slidingLog); ok {
		p.mu.Lock()
		kept = append(append(append(kept, p.cut...), p.ring[p.head:]...), p.ring[:p.head]...)
		l.last = p.last
		p.mu.Unlock()
	}
	kept = slices.DeleteFunc(kept, func(e int64) bool { return e == math.MinInt64 || l.last-e >= int64(b.cfg.Window) })
	n := max(len(kept)-int(b.cfg.Limit), 0)
	l.cut = append(l.cut, kept[:n]...)
	l.ring = slices.Concat(slices.Repeat([]int64{math.MinInt64}, int(b.cfg.Limit)-len(kept)+n), kept[n:])
	return l
}

// entry returns the i-th oldest entry.
func (l *slidingLog) entry(i int) int64 { return l.ring[(l.head+i)%len(l.ring)] }

func (l *slidingLog) Acquire(now int64, n int64) Decision {
	lim, w := l.limitAt(now), int64(l.cfg.Window)
	l.mu.Lock()
	defer l.mu.Unlock()
	read := now // the caller's reading: retry-after is measured on its clock
	now = max(now, l.last)
	l.last = now
	size := len(l.ring)
	// In-window entries are the newest ones: find the first in (now-w, now].
	first := sort.Search(size, func(i int) bool { return l.entry(i) > now-w })
	used := int64(size - first)
	if n > lim || used+n > lim {
		retry := w
		if n <= lim {
			// The (lim-n+1)-th newest entry must leave the window.
			retry = l.entry(size-int(lim-n+1)) + w - read
		}
		return Decision{Limit: lim, Remaining: max(lim-used, 0), RetryAfter: time.Duration(max(retry, 0))}
	}
	for i := int64(0); i < n; i++ {
		l.ring[l.head] = now
		l.head = (l.head + 1) % size
	}
	l.seq += n
	l.admitted(n)
	d := Decision{OK: true, Limit: lim, Remaining: lim - used - n, mark: l.seq}
	if d.Remaining == 0 {
		// A request of one waits for the lim-th newest entry, the oldest
		// in the window, to leave it.
		d.Next = time.Duration(max(l.entry(size-int(lim))+w-read, 0))
	}
	return d
}

// Undo removes the reservation's entries when nothing was admitted after it;
// otherwise they stay, which only makes the log stricter until they expire.
func (l *slidingLog) Undo(d Decision, n int64) {
	if !d.OK {
		return
	}
	l.undone(n)
	l.mu.Lock()
	defer l.mu.Unlock()
	if d.mark != l.seq {
		return
	}
	for range n {
		l.head = (l.head - 1 + len(l.ring)) % len(l.ring)
		l.ring[l.head] = math.MinInt64
	}
	l.seq -= n
}
