package flow

import "sync/atomic"

// A lease is a share of a leap array's quota that one CPU took in advance,
// counted in the bucket whose start is its tag and usable while that
// bucket is current: the CPU admits from it with one compare-and-swap on a
// cache line only it writes, instead of writing the bucket's count, which
// every CPU writes. Leases are sized by stripe.LeaseSize.
//
// word holds a generation (which changes with every new lease) and the
// permits left. A refill claims the lease by moving word to an odd
// generation with no permits (claim), gives back what was left of the old
// lease, then stores the new tag and, last, word with the next even
// generation and the new permits (renew). A reader that loads word, then
// tag, and swaps word from the value it loaded has therefore used a
// permit of the lease of that tag: a refill in between would have changed
// word.
type lease struct {
	word atomic.Int64
	tag  atomic.Int64
	_    [48]byte
}

const (
	leaseBits = 20 // bits of lease.word holding the permits left
	leaseLeft = 1<<leaseBits - 1
	leaseGen  = 1 << leaseBits // one generation in lease.word
)

// claim starts a refill: it returns the word of the lease it ended, whose
// permits left the caller gives back, or false when another refill of ls
// is under way. The lease is the caller's until it calls renew.
func (ls *lease) claim() (int64, bool) {
	w := ls.word.Load()
	if w&leaseGen != 0 || !ls.word.CompareAndSwap(w, w&^leaseLeft+leaseGen) {
		return 0, false
	}
	return w, true
}

// renew ends the refill that claimed w: the lease holds permits, for tag.
func (ls *lease) renew(w, permits, tag int64) {
	if permits > 0 {
		ls.tag.Store(tag)
	}
	ls.word.Store(w&^leaseLeft + 2*leaseGen + permits)
}

// end ends the lease, when no refill is under way, and returns the permits
// it had left and its tag, for the caller to give back.
func (ls *lease) end() (left, tag int64) {
	w := ls.word.Load()
	tag = ls.tag.Load() // the tag of w if the swap succeeds
	if w&leaseGen == 0 && ls.word.CompareAndSwap(w, w&^leaseLeft+2*leaseGen) {
		return w & leaseLeft, tag
	}
	return 0, 0
}

// Leased returns the permits of the window at now that l's CPUs leased in
// advance and have not used (0 without leases): not requests.
func Leased(l Limiter, now int64) (left int64) {
	if la, ok := l.(*leapArray); ok {
		ws := la.arr.Current(now).Start()
		for i := range la.leases {
			if w, tag := la.leases[i].word.Load(), la.leases[i].tag.Load(); uint64(ws-tag) < uint64(la.cfg.Window) {
				left += w & leaseLeft
			}
		}
	}
	return left
}
