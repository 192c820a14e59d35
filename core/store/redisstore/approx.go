package redisstore

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluicekit/sluice/core/ratemath"
	"github.com/sluicekit/sluice/core/store"
	"github.com/sluicekit/sluice/core/stripe"
)

// entry is the local state of one approximate limit.
type entry struct {
	lim     store.Limit
	sliding bool
	w       int64
	base    string // sliding: PREFIX:{KEY}:asc:WINDOW: (the window's index follows)
	gkey    string // bucket: the TAT's key, shared with exact mode
	costKey string // bucket: the key of the cost the TAT was written at (newScriptGCRA)
	// exactState and marker are a sliding counter's keys of exact mode's
	// state of its window and of the window marker (slidingKeys), which its
	// exchanges use (scriptApproxSliding).
	exactState, marker string
	// id names the entry in Redis's records of pushes: the Store's id and
	// the entry's number. seq numbers its pushes.
	id  string
	seq atomic.Int64

	// state holds stUsed and stDead. One word, so that the sync's sweep
	// forgets an entry only if no Take marked it used meanwhile
	// (CompareAndSwap from 0), and a Take that finds its entry dead after
	// deciding knows its decision may be lost and decides again.
	state     atomic.Int32
	synced    atomic.Int64 // the sync round of the last exchange with Redis; 0 never
	refreshMu sync.Mutex   // one refresh at a time

	// Sliding counter, under mu: the index of the current window; this
	// entry's counts of it and of the previous one, and the parts of
	// them Redis confirmed holding; the other instances' counts as of the
	// last exchange.
	mu                    sync.Mutex
	idx                   int64
	cur, prev             int64
	curPushed, prevPushed int64
	othersCur, othersPrev int64
	// Sliding counter leases (see takeLeased), made when two Takes first
	// contend for mu; idxNow is idx, readable without mu, and remaining
	// the quota left after the last decision under mu.
	leases    atomic.Pointer[[]lease]
	idxNow    atomic.Int64
	remaining atomic.Int64

	// Bucket: the local TAT, on Redis's clock; the cost this entry
	// admitted, and the part of it Redis confirmed holding.
	g        *store.Bucket
	cost1    int64
	tat      atomic.Int64
	admitted atomic.Int64
	pushed   atomic.Int64
}

// lease is a CPU's lease of a sliding counter's current window: permits
// counted in the entry's cur, which the CPU admits without the entry's
// mutex while the window lasts. word is the window's index (its low
// 56 bits) shifted left by leaseBits, plus the permits left. Padded to
// its own cache line.
type lease struct {
	word atomic.Uint64
	_    [56]byte
}

const (
	leaseBits = 8 // bits of lease.word holding the permits left (MaxLease fits)
	leaseLeft = 1<<leaseBits - 1
)

// leaseWord returns the lease word of left permits in window idx.
func leaseWord(idx, left int64) uint64 { return uint64(idx)<<leaseBits | uint64(left) }

// leaseOf returns the permits a lease word holds in window idx: 0 when it
// is a lease of another window.
func leaseOf(w uint64, idx int64) int64 {
	if w>>leaseBits != leaseWord(idx, 0)>>leaseBits {
		return 0
	}
	return int64(w & leaseLeft)
}

// Bits of entry.state.
const (
	stUsed int32 = 1 << iota // a Take since the last sync round (set on a new entry)
	stDead                   // forgotten by the store, or replaced
)

func (e *entry) dead() bool { return e.state.Load()&stDead != 0 }

// now returns the time on this instance's view of Redis's clock, in
// nanoseconds since 1970. It reads the monotonic clock: a coarse clock's
// goroutine runs late when the host is busy, and counts stamped on a
// lagging clock leave their window early. It never goes back: each measure
// of the offset is off by up to half a round trip, and a pacing decision
// made on a clock that stepped back would make a request wait longer than
// its slot.
func (s *Store) now() int64 { return s.nowAt(int64(time.Since(s.start))) }

// nowAt returns now for t, the time since s.start.
func (s *Store) nowAt(t int64) int64 { return max(t+s.offset.Load(), s.floor.Load()) }

// outOfSync reports whether approximate limits fail at t (the time since
// s.start): the last exchange with Redis failed, and the last successful
// sync round started longer ago than the sync age (see WithSyncPeriod),
// plus how late the process runs (see WithMaxLag). Syncs that are only
// late, on a busy host, are not Redis failing.
func (s *Store) outOfSync(t int64) bool {
	return !s.healthy() && t-s.okSyncStart.Load() > int64(s.o.maxSyncAge)+s.lag(t)
}

// syncAgeErr returns the error of an approximate Take at t, out of sync.
func (s *Store) syncAgeErr(t int64) error {
	return fmt.Errorf("redisstore: %w: approximate counts not synchronized with Redis for %s (more than %s): %v",
		store.ErrUnavailable, time.Duration(t-s.okSyncStart.Load()).Round(time.Millisecond), s.o.maxSyncAge, s.Err())
}

// newEntry returns a new entry of key for lim, valid; nil when its bucket
// cannot be made.
func (s *Store) newEntry(key string, lim store.Limit) *entry {
	e := &entry{lim: lim, w: int64(lim.Window), id: s.id + "." + strconv.FormatInt(s.serial.Add(1), 36)}
	// Born used: the sweep forgets an entry only after a whole round
	// without a Take, never between its making and its first Take.
	e.state.Store(stUsed)
	if lim.Algorithm == store.SlidingCounter {
		e.sliding = true
		e.base = s.redisKey(key, "asc:"+lim.Window.String()+":")
		e.exactState, e.marker = s.slidingKeys(key, lim.Window)
		return e
	}
	g := gcraOf(lim)
	e.gkey, e.costKey = s.gcraKeys(key, g.suffix)
	// The same bucket as the exact scripts': whole-nanosecond costs (see
	// costOf). lim is valid (Take), so NewBucket does not fail; if it did,
	// the key would be decided in Redis.
	b, err := store.NewBucket(lim)
	if err != nil {
		return nil
	}
	e.g = b
	e.cost1 = g.cost1
	return e
}

// entry returns the tracked entry of key for lim, making it when there is
// room; nil when the store tracks as many keys as it may.
func (s *Store) entry(key string, lim store.Limit) *entry {
	if v, ok := s.entries.Load(key); ok {
		e := v.(*entry)
		if e.lim == lim && !e.dead() {
			return e
		}
		// The limit changed (or the sweep, or another replacement, is
		// forgetting e): a new entry carries e's counts over (carry). e
		// dies first, so a Take that decides on e after carry read it
		// finds it dead and decides again on the new entry: every
		// admission made on e counts in what carry reads. The next sync
		// pushes what e admitted, before the new entry's counts.
		ne := s.newEntry(key, lim)
		if ne == nil {
			return nil
		}
		e.state.Or(stDead)
		ne.carry(e, s.now())
		if s.carried != nil {
			s.carried()
		}
		if s.entries.CompareAndSwap(key, v, ne) {
			s.retire(e)
			return ne
		}
		return s.entry(key, lim)
	}
	if s.tracked.Load() >= int64(s.o.maxKeys) {
		return nil
	}
	ne := s.newEntry(key, lim)
	if ne == nil {
		return nil
	}
	if _, loaded := s.entries.LoadOrStore(key, ne); loaded {
		return s.entry(key, lim) // raced: use the winner, or replace it
	}
	s.tracked.Add(1)
	return ne
}

// maxAhead bounds how far ahead of now a carried TAT runs, as core's buckets
// bound theirs (2^52ns, about 52 days).
const maxAhead = 1 << 52

// carry gives e, new, the state of old, the entry its limit replaced, at
// now, as the memory store does (flow.Reload): a bucket's requests owed at
// the new cost; a sliding counter's counts each at the last nanosecond of
// its old window (aligned windows, as in memory). Counts old pushes to the
// keys of the same window count as the other instances' until e's first
// exchange reads them back; counts of another window's keys are e's own, to
// push to its keys. old synchronized, e decides at once on what old knew.
func (e *entry) carry(old *entry, now int64) {
	e.synced.Store(old.synced.Load())
	if e.sliding != old.sliding {
		return
	}
	if !e.sliding {
		ahead := old.tat.Load() - now
		if ahead > 0 && e.cost1 > 0 && old.cost1 > 0 {
			owed := ratemath.MulDiv(ahead, e.cost1, old.cost1)
			if ratemath.MulDiv(owed, old.cost1, e.cost1) < ahead { // rounded up
				owed++
			}
			e.tat.Store(now + min(owed, maxAhead))
		}
		return
	}
	old.mu.Lock()
	if idx := now / old.w; idx > old.idx {
		old.roll(idx)
	}
	idx, own, others := old.idx, [2]int64{old.cur, old.prev}, [2]int64{max(old.othersCur, 0), max(old.othersPrev, 0)}
	old.mu.Unlock()
	cur := (idx+1)*old.w - 1 // the last nanosecond of old's current window
	e.idx = max(cur/e.w, now/e.w)
	e.idxNow.Store(e.idx)
	if old.w == e.w {
		others[0], others[1] = others[0]+own[0], others[1]+own[1]
		own = [2]int64{}
	}
	e.cur, e.othersCur = own[0], others[0]
	switch (idx*old.w - 1) / e.w { // where old's previous window's last nanosecond lands
	case e.idx:
		e.cur, e.othersCur = e.cur+own[1], e.othersCur+others[1]
	case e.idx - 1:
		e.prev, e.othersPrev = own[1], others[1]
	}
}

// retire marks e dead and keeps it for the next sync to push its counts.
func (s *Store) retire(e *entry) {
	e.state.Or(stDead)
	s.retiredMu.Lock()
	if len(s.retired) < s.o.maxKeys {
		s.retired = append(s.retired, e)
	}
	s.retiredMu.Unlock()
}

// lookup returns the entry of key when it is tracked for lim.
func (s *Store) lookup(key string, lim store.Limit) *entry {
	if v, ok := s.entries.Load(key); ok {
		if e := v.(*entry); e.lim == lim && !e.dead() {
			return e
		}
	}
	return nil
}

// takeApprox decides locally. A key not tracked yet, or not exchanged
// with Redis for two sync periods, first reads the global counts (one
// round trip) while Redis is healthy; a key that does not fit in the
// store's bound is decided in Redis.
//
// A decision on an entry that died meanwhile (the sweep forgot it, or
// its limit was replaced) is made again on the key's new entry: only a
// decision on an entry still live after it is returned, so every
// admission counts in what a replacement carries (see entry). Its count
// may then be pushed twice (the old entry pushes what it admitted), never
// lost. Each decision made again means another Take replaced the entry;
// after maxRedecide of them it fails with store.ErrKeyUnavailable, rather
// than decide in Redis on counts that lack this instance's last ones.
func (s *Store) takeApprox(ctx context.Context, key string, lim store.Limit, n int64) (store.Decision, error) {
	for range maxRedecide {
		e := s.entry(key, lim)
		if e == nil {
			return s.takeRemote(ctx, key, lim, n)
		}
		if d, err := s.takeTracked(ctx, e, n, int64(time.Since(s.start))); err != nil || !e.dead() {
			return d, err
		}
	}
	return store.Decision{}, fmt.Errorf("redisstore: %w: %w: the key's limit was replaced %d times during one decision", store.ErrUnavailable, store.ErrKeyUnavailable, maxRedecide)
}

// maxRedecide bounds the decisions takeApprox makes again on a key whose
// entry is replaced under them (8 goroutines deciding one key under two
// limits in turn made at most 4).
const maxRedecide = 64

// takeTracked decides on a tracked entry at t (the time since s.start).
// The caller checks that e is not dead afterwards.
func (s *Store) takeTracked(ctx context.Context, e *entry, n, t int64) (store.Decision, error) {
	if e.state.Load()&stUsed == 0 {
		e.state.Or(stUsed)
	}
	if e.stale(s.gen.Load()) && s.healthy() {
		if err := s.refresh(ctx, e); err != nil && (ctx.Err() != nil || e.synced.Load() == 0) {
			return store.Decision{}, err // Redis failed this call
		}
		t = int64(time.Since(s.start))
	}
	if e.synced.Load() == 0 {
		// Nothing known of the other instances' counts: a local decision
		// could admit the whole limit in each of them. Redis failed an
		// earlier call: a failure of the store, which this one does not
		// repeat.
		return store.Decision{}, fmt.Errorf("redisstore: %w: %w: approximate counts never read from Redis: %v", store.ErrUnavailable, store.ErrKeyUnavailable, s.Err())
	}
	return e.take(s.picker, s.nowAt(t), n), nil
}

// stale reports whether e has not exchanged counts with Redis in the last
// sync round or the current one.
func (e *entry) stale(gen int64) bool {
	sy := e.synced.Load()
	return sy == 0 || sy < gen-1
}

// refresh exchanges e with Redis unless another goroutine just did.
func (s *Store) refresh(ctx context.Context, e *entry) error {
	e.refreshMu.Lock()
	defer e.refreshMu.Unlock()
	if !e.stale(s.gen.Load()) || !s.healthy() {
		return nil
	}
	return s.exchange(ctx, e)
}

// take decides n at now on e's local state. pk picks the CPU whose lease
// a sliding counter uses.
func (e *entry) take(pk *stripe.Picker, now, n int64) store.Decision {
	if !e.sliding {
		d := e.g.Take(&e.tat, now, n)
		if d.OK {
			e.admitted.Add(e.cost(n))
		}
		return d
	}
	lim := e.lim.Limit
	ls := e.leases.Load()
	var cpu uint32
	if ls != nil {
		cpu = pk.Pick()
		if e.takeLeased(ls, cpu, now, n) {
			return store.Decision{OK: true, Limit: lim, Remaining: e.remaining.Load()}
		}
	}
	contended := !e.mu.TryLock()
	if contended {
		e.mu.Lock()
	}
	if idx := now / e.w; idx > e.idx {
		e.roll(idx)
	}
	el := min(max(now-e.idx*e.w, 0), e.w)
	p := e.prev + max(e.othersPrev, 0)
	c := e.cur + max(e.othersCur, 0)
	est := ratemath.SlidingEstimate(p, c+n, el, e.w)
	if est <= float64(lim) {
		e.cur += n
		left := max(int64(float64(lim)-est), 0)
		if ls == nil {
			if ls = e.startLeases(contended, left); ls != nil {
				cpu = pk.Pick()
			}
		}
		if ls != nil {
			left -= e.refill(ls, cpu, left)
			e.remaining.Store(left)
		}
		e.mu.Unlock()
		d := store.Decision{OK: true, Limit: lim, Remaining: left}
		if left == 0 {
			d.Next = time.Duration(ratemath.SlidingWait(p, c+n, el, 1, lim, e.w))
		}
		return d
	}
	e.mu.Unlock()
	return slidingDecision(e.lim, false, p, c, el, n)
}

// takeLeased admits n at now from the lease of cpu, without e.mu, when it
// holds n permits of the current window. A sliding counter that two Takes
// contend for gets leases (take): each CPU then takes up to
// stripe.MaxLease permits at once under e.mu, counted in cur (so pushed to
// Redis as admitted), and admits them one by one on its own cache line.
// What a lease has left goes back to cur when its CPU refills it in the
// same window; a lease of a window that ended stays counted in it, so
// leases hold back at most stripe.MaxLease permits per CPU, never admit
// beyond the limit, and make requests on several CPUs stop taking turns
// on the entry's mutex. A single CompareAndSwap: a lost race decides
// under e.mu.
func (e *entry) takeLeased(ls *[]lease, cpu uint32, now, n int64) bool {
	idx := e.idxNow.Load()
	if now < idx*e.w || now-idx*e.w >= e.w {
		return false // another window: decided under e.mu, which rolls
	}
	l := &(*ls)[stripe.Of(cpu, len(*ls))]
	w := l.word.Load()
	return leaseOf(w, idx) >= n && l.word.CompareAndSwap(w, w-uint64(n))
}

// startLeases returns e's leases, made by another Take meanwhile (a second
// slice would strand what the first one's leases hold), or made now when
// this Take contended for e.mu and left, the quota left, is worth leasing;
// nil otherwise. Under e.mu.
func (e *entry) startLeases(contended bool, left int64) *[]lease {
	if ls := e.leases.Load(); ls != nil || !contended || stripe.LeaseSize(left, stripe.Count()) == 0 {
		return ls
	}
	ls := make([]lease, stripe.Count())
	e.leases.Store(&ls)
	return &ls
}

// refill gives the lease of cpu its share of left, the quota left in the
// current window, in place of what it held: what it held in this window
// goes back to cur. It returns the permits leased. Under e.mu.
func (e *entry) refill(ls *[]lease, cpu uint32, left int64) int64 {
	k := stripe.LeaseSize(left, len(*ls))
	old := (*ls)[stripe.Of(cpu, len(*ls))].word.Swap(leaseWord(e.idx, k))
	e.cur += k - leaseOf(old, e.idx)
	return k
}

func (e *entry) cost(n int64) int64 {
	if n == 1 {
		return e.cost1
	}
	return costOf(n, e.w, e.lim.Limit)
}

// roll moves the sliding counter to window idx. Under e.mu.
func (e *entry) roll(idx int64) {
	if idx == e.idx+1 {
		e.prev, e.prevPushed, e.othersPrev = e.cur, e.curPushed, e.othersCur
	} else {
		e.prev, e.prevPushed, e.othersPrev = 0, 0, 0
	}
	e.cur, e.curPushed, e.othersCur = 0, 0, 0
	e.idx = idx
	e.idxNow.Store(idx)
}

func (s *Store) undoApprox(ctx context.Context, key string, lim store.Limit, d store.Decision, n int64) error {
	v, ok := s.entries.Load(key)
	if !ok || v.(*entry).lim != lim {
		return s.undoRemote(ctx, key, lim, d, n)
	}
	e := v.(*entry)
	if e.sliding {
		e.mu.Lock()
		if e.cur >= n {
			e.cur -= n
		} else if e.prev >= n {
			e.prev -= n
		}
		e.mu.Unlock()
		return nil
	}
	cost := costOf(n, e.w, d.Limit)
	if e.lim.Algorithm != store.LeakyBucket {
		e.tat.Add(-cost)
		e.admitted.Add(-cost)
		return nil
	}
	before := e.tat.Load()
	e.g.Undo(&e.tat, d, n)
	if e.tat.Load() == before-cost {
		e.admitted.Add(-cost)
	}
	return nil
}

// takeRemote decides an approximate limit the store does not track in
// Redis, on the counts the instances' syncs keep.
func (s *Store) takeRemote(ctx context.Context, key string, lim store.Limit, n int64) (store.Decision, error) {
	if lim.Limit == 0 {
		return store.Decision{RetryAfter: lim.Window}, nil
	}
	if lim.Algorithm != store.SlidingCounter {
		return s.takeExact(ctx, key, lim, n) // the same TAT
	}
	w := int64(lim.Window)
	now := s.now()
	idx := now / w
	el := now - idx*w
	base := s.redisKey(key, "asc:"+lim.Window.String()+":")
	c := s.getCall()
	c.set(scriptApproxSlidingTake, base+strconv.FormatInt(idx, 10), n, lim.Limit, w, el, s.ttlMillis(now, (idx+2)*w))
	c.keys = append(c.keys, base+strconv.FormatInt(idx-1, 10))
	if err := s.do(ctx, c); err != nil {
		return store.Decision{}, err
	}
	defer s.putCall(c)
	v, err := ints(c.val, 3)
	if err != nil {
		return store.Decision{}, err
	}
	return slidingDecision(lim, v[0] == 1, v[1], v[2], el, n), nil
}

func (s *Store) undoRemote(ctx context.Context, key string, lim store.Limit, d store.Decision, n int64) error {
	c := s.getCall()
	switch lim.Algorithm {
	case store.SlidingCounter:
		w := int64(lim.Window)
		now := s.now()
		idx := now / w
		base := s.redisKey(key, "asc:"+lim.Window.String()+":")
		c.set(scriptApproxSlidingUndo, base+strconv.FormatInt(idx, 10), n)
	case store.TokenBucket:
		c.set(scriptUndoGCRA, s.redisKey(key, "tb"), costOf(n, int64(lim.Window), d.Limit))
	default:
		s.putCall(c)
		return nil
	}
	err := s.do(ctx, c)
	if err == nil {
		s.putCall(c)
	}
	return err
}

// ttlMillis returns the expiry, in milliseconds, of state that matters until
// end (on Redis's clock), plus the idle expiry.
func (s *Store) ttlMillis(now, end int64) int64 {
	return max((end-now+int64(time.Millisecond)-1)/int64(time.Millisecond), 0) + s.o.idle.Milliseconds()
}

// snapshot is what one exchange of an entry with Redis pushed: the
// entry's totals (see scriptApproxSliding and scriptApproxGCRA).
type snapshot struct {
	idx, cur, prev int64 // sliding counter
	total          int64 // bucket
}

// prepare fills c with the exchange of e: push this entry's totals, read
// the global counts.
func (s *Store) prepare(e *entry, c *call, now int64) snapshot {
	if !e.sliding {
		sn := snapshot{total: e.admitted.Load()}
		c.set(scriptApproxGCRA, e.gkey, e.seq.Add(1), sn.total, e.pushed.Load(), strconv.FormatInt(e.tat.Load(), 10), s.o.idle.Milliseconds(), e.cost1)
		c.keys = append(c.keys, e.gkey+":in:"+e.id, e.costKey)
		return sn
	}
	e.mu.Lock()
	if idx := now / e.w; idx > e.idx {
		e.roll(idx)
	}
	sn := snapshot{idx: e.idx, cur: e.cur, prev: e.prev}
	seq := e.seq.Add(1) // under mu: a later snapshot has a larger number
	e.mu.Unlock()
	ttl := s.ttlMillis(now, (sn.idx+2)*e.w)
	cur, prev := e.base+strconv.FormatInt(sn.idx, 10), e.base+strconv.FormatInt(sn.idx-1, 10)
	c.set(scriptApproxSliding, cur, e.id, seq, sn.cur, sn.prev, ttl, max(ttl-e.w/int64(time.Millisecond), 1))
	c.keys = append(c.keys, prev, cur+":in", prev+":in", e.marker)
	if e.synced.Load() == 0 { // a new entry: the rule may have been exact
		c.keys = append(c.keys, e.exactState)
		c.args = append(c.args, strconv.FormatInt(e.w, 10), strconv.FormatInt(sn.idx*e.w, 10))
	}
	return sn
}

// apply takes in the answer to the exchange sn of e. The counts of a
// failed exchange are pushed again next time: a push reached Redis or not,
// its totals count once.
func (s *Store) apply(e *entry, sn snapshot, c *call, gen int64) error {
	err := c.err
	if !e.sliding {
		var g, mine int64
		if err == nil {
			g, mine, err = tatReply(c.val)
		}
		if err != nil {
			return err
		}
		e.pushed.Store(mine)
		// The later of the local TAT and Redis's plus what was admitted
		// beyond what Redis counted of this entry: the local one knows
		// of admissions another exchange is pushing right now.
		for {
			old := e.tat.Load()
			if e.tat.CompareAndSwap(old, max(old, g+e.admitted.Load()-mine)) {
				break
			}
		}
		e.synced.Store(gen)
		return nil
	}
	var v []int64
	if err == nil {
		if v, err = ints(c.val, 4); err == nil && len(v) != 4 {
			err = nonsense(c.val)
		}
	}
	if err != nil {
		return err
	}
	gCur, gPrev, mCur, mPrev := v[0], v[1], v[2], v[3]
	e.mu.Lock()
	defer e.mu.Unlock()
	switch e.idx {
	case sn.idx:
		e.othersCur, e.curPushed = gCur-mCur, mCur
		e.othersPrev, e.prevPushed = gPrev-mPrev, mPrev
	case sn.idx + 1: // the window moved on meanwhile
		e.othersPrev, e.prevPushed = gCur-mCur, mCur
	}
	e.synced.Store(gen)
	return nil
}

// tatReply reads the reply of scriptApproxGCRA.
func tatReply(val any) (tat, mine int64, err error) {
	vs, ok := val.([]any)
	if !ok || len(vs) != 2 {
		return 0, 0, nonsense(val)
	}
	a, ok1 := vs[0].(string)
	b, ok2 := vs[1].(string)
	tat, err1 := strconv.ParseInt(a, 10, 64)
	mine, err2 := strconv.ParseInt(b, 10, 64)
	if !ok1 || !ok2 || err1 != nil || err2 != nil {
		return 0, 0, nonsense(val)
	}
	return tat, mine, nil
}

// exchange exchanges e with Redis now, on the caller's behalf.
func (s *Store) exchange(ctx context.Context, e *entry) error {
	if !s.offsetKnown.Load() {
		if err := s.fetchOffset(ctx); err != nil {
			return err
		}
	}
	c := s.getCall()
	sn := s.prepare(e, c, s.now())
	if err := s.do(ctx, c); err != nil {
		// c may still be used by a dispatcher: apply a copy.
		_ = s.apply(e, sn, &call{err: err}, 0)
		s.setErr(err)
		return err
	}
	err := s.apply(e, sn, c, s.gen.Load())
	s.putCall(c)
	s.setErr(err)
	return err
}

// fetchOffset reads Redis's clock.
func (s *Store) fetchOffset(ctx context.Context) error {
	c := s.getCall()
	c.script, c.keys, c.args = scriptTime, c.keys[:0], c.args[:0]
	before := int64(time.Since(s.start))
	if err := s.do(ctx, c); err != nil {
		s.setErr(err)
		return err
	}
	after := int64(time.Since(s.start))
	err := s.setOffset(c.val, before, after)
	s.putCall(c)
	s.setErr(err)
	return err
}

// Bounds on the measures of Redis's clock that setOffset takes: a round
// trip up to looseRTT, or twice the best, is always tight enough; a measure
// in force is replaced by a looser one once it is offsetMaxAge old.
const (
	looseRTT     = 2 * time.Millisecond
	offsetMaxAge = time.Minute
)

// setOffset sets the offset of Redis's clock from a TIME reply read between
// before and after on the local clock, unless the measure is too loose (see
// looseRTT).
func (s *Store) setOffset(val any, before, after int64) error {
	vs, ok := val.([]any)
	if !ok || len(vs) != 2 {
		return nonsense(val)
	}
	sec, ok1 := vs[0].(string)
	usec, ok2 := vs[1].(string)
	a, err1 := strconv.ParseInt(sec, 10, 64)
	b, err2 := strconv.ParseInt(usec, 10, 64)
	if !ok1 || !ok2 || err1 != nil || err2 != nil {
		return nonsense(val)
	}
	redisNow := a*int64(time.Second) + b*int64(time.Microsecond)
	// The measure is off by up to half its round trip: one that took
	// much longer than the best (a loaded machine, a long pipeline) does
	// not replace one less than a minute old.
	rtt := after - before
	best := s.bestRTT.Load()
	if s.offsetKnown.Load() && rtt > max(2*best, int64(looseRTT)) && after-s.offsetAt.Load() < int64(offsetMaxAge) {
		return nil
	}
	if rtt < best {
		s.bestRTT.Store(rtt)
	}
	s.offsetAt.Store(after)
	offset := redisNow - before - rtt/2
	if old := s.offset.Load(); s.offsetKnown.Load() && offset < old {
		// The time seen through the old offset so far becomes the floor,
		// before the lower offset is in.
		seen := int64(time.Since(s.start)) + old
		for f := s.floor.Load(); f < seen && !s.floor.CompareAndSwap(f, seen); f = s.floor.Load() {
		}
	}
	s.offset.Store(offset)
	s.offsetKnown.Store(true)
	return nil
}

func (s *Store) healthy() bool {
	b := s.lastErr.Load()
	return b == nil || b.err == nil
}

func (s *Store) setErr(err error) {
	if err == nil {
		if !s.healthy() {
			s.lastErr.Store(&errBox{})
		}
		return
	}
	s.lastErr.Store(&errBox{err: err})
}

// Ping reads Redis's clock, within the timeout, and returns the error if
// Redis does not answer, which Err reports until an exchange succeeds (the
// sync tries again each sync period). A Store that is not pinged reads
// Redis's clock at its first sync round.
func (s *Store) Ping(ctx context.Context) error {
	if s.closed.Load() {
		return errClosed()
	}
	return s.fetchOffset(ctx)
}

// Err returns the error of the approximate mode's last exchange with Redis
// (a sync, a key's first read, or Ping), or nil when it succeeded. While it
// is not nil, approximate limits are decided on local counts only.
func (s *Store) Err() error {
	if b := s.lastErr.Load(); b != nil {
		return b.err
	}
	return nil
}

// Stats are counters of a Store's approximate mode.
type Stats struct {
	// Tracked is the number of keys tracked locally.
	Tracked int64
	// Syncs counts the sync rounds that went to Redis (those of a Store
	// tracking keys); SyncErrors those of them that failed, wholly or in
	// part.
	Syncs, SyncErrors int64
	// MaxSyncGap is the longest time, since New, from the start of a
	// successful sync round to the end of the next successful one, or to
	// now while that one has not come (a round of a Store that tracks no
	// key succeeds), so it grows during an outage until Close: an admission
	// reaches Redis within this Store's MaxSyncGap, and another Store's
	// decisions within that Store's MaxSyncGap more (see the package
	// documentation). About the sync period plus a round trip while the
	// host runs on time; it grows with the lag of a busy host and with
	// Redis's failures.
	MaxSyncGap time.Duration
}

// Stats returns the Store's counters.
func (s *Store) Stats() Stats {
	gap := s.maxSyncGap.Load()
	if start := s.okSyncStart.Load(); start != 0 && !s.closed.Load() { // closed: nothing left to push
		gap = max(gap, int64(time.Since(s.start))-start)
	}
	return Stats{Tracked: s.tracked.Load(), Syncs: s.syncs.Load(), SyncErrors: s.syncErrors.Load(),
		MaxSyncGap: time.Duration(gap)}
}

func (s *Store) syncLoop() {
	t := time.NewTicker(s.o.syncPeriod)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			s.syncOnce()
		}
	}
}

// syncOnce exchanges the counts of the keys used since the last round, or
// with counts not pushed yet, in pipelines of the batch size, and forgets
// the keys whose state no longer matters.
func (s *Store) syncOnce() {
	s.syncMu.Lock()
	defer s.syncMu.Unlock()
	start := int64(time.Since(s.start))
	gen := s.gen.Add(1)
	now := s.now()
	s.retiredMu.Lock()
	work := s.retired
	s.retired = nil
	s.retiredMu.Unlock()
	s.entries.Range(func(k, v any) bool {
		e := v.(*entry)
		if e.state.And(^stUsed)&stUsed != 0 || e.hasPending() {
			work = append(work, e)
		} else if e.expired(now, int64(s.o.idle)) && e.state.CompareAndSwap(0, stDead) {
			// Dead before it leaves the map: a Take that marked it used
			// first keeps it; one that marks it after sees it dead.
			if s.entries.CompareAndDelete(k, v) { // else entry replaced it
				s.tracked.Add(-1)
			}
		}
		return true
	})
	if len(work) == 0 && s.tracked.Load() == 0 {
		// Nothing to exchange: a success, unless Redis never answered
		// or the last exchange failed, and Redis still does not answer
		// (which would report it healthy, or make approximate limits
		// fresh again, while Redis is down).
		if s.healthy() && s.offsetKnown.Load() || s.fetchOffset(context.Background()) == nil {
			s.syncDone(start)
		}
		return
	}
	// Keys tracked but quiet: a round without entries still reads the
	// marker, which tells whether Redis lost their counts.
	var firstErr error
	lost := false
	for first := true; first || len(work) > 0; first = false {
		chunk := work[:min(len(work), s.o.batch)]
		work = work[len(chunk):]
		l, err := s.syncChunk(chunk, gen)
		if err != nil && firstErr == nil {
			firstErr = err
		}
		lost = lost || l
	}
	if lost {
		// Redis lost its data (or the marker expired): the next round
		// pushes every key's counts again, the quiet ones too.
		s.entries.Range(func(_, v any) bool {
			v.(*entry).state.Or(stUsed)
			return true
		})
	}
	s.syncs.Add(1)
	if firstErr != nil {
		s.syncErrors.Add(1)
	} else {
		s.syncDone(start)
	}
	s.setErr(firstErr)
}

// syncDone records a successful sync round that started at start, for
// Stats.MaxSyncGap. Under syncMu.
func (s *Store) syncDone(start int64) {
	if prev := s.okSyncStart.Load(); prev != 0 {
		if gap := int64(time.Since(s.start)) - prev; gap > s.maxSyncGap.Load() {
			s.maxSyncGap.Store(gap)
		}
	}
	s.okSyncStart.Store(start)
}

// syncChunk exchanges the entries of chunk, in one pipeline with a read
// of Redis's clock and of the Store's marker. It reports whether the
// marker was missing: Redis lost what the Store pushed before.
func (s *Store) syncChunk(chunk []*entry, gen int64) (bool, error) {
	const head = 2
	calls := make([]*call, len(chunk)+head)
	calls[0] = &call{script: scriptTime}
	calls[1] = &call{}
	calls[1].set(scriptAlive, s.o.prefix+":{"+s.id+"}:alive", 2*s.o.maxSyncAge.Milliseconds())
	before := int64(time.Since(s.start))
	now := before + s.offset.Load()
	snaps := make([]snapshot, len(chunk))
	for i, e := range chunk {
		calls[i+head] = &call{}
		snaps[i] = s.prepare(e, calls[i+head], now)
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.clientTimeout())
	defer cancel()
	s.run(ctx, calls)
	after := int64(time.Since(s.start))
	var firstErr error
	if calls[0].err != nil {
		firstErr = calls[0].err
	} else if err := s.setOffset(calls[0].val, before, after); err != nil {
		firstErr = err
	}
	for i, e := range chunk {
		err := s.apply(e, snaps[i], calls[i+head], gen)
		if err != nil && e.dead() {
			s.retire(e) // a replaced entry: pushed again next round
		}
		if err != nil && firstErr == nil {
			firstErr = err
		}
	}
	had, ok := calls[1].val.(int64)
	return calls[1].err == nil && ok && had == 0, firstErr
}

func (e *entry) hasPending() bool {
	if !e.sliding {
		return e.admitted.Load() != e.pushed.Load()
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.cur != e.curPushed || e.prev != e.prevPushed
}

// expired reports whether e's state no longer matters at now, idle after
// the moment it stopped mattering.
func (e *entry) expired(now, idle int64) bool {
	if !e.sliding {
		return e.tat.Load()+idle < now
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return (e.idx+2)*e.w+idle < now
}

// costOf returns the cost of n requests in a bucket of limit per window w,
// in whole nanoseconds: n times w/limit rounded up, so that the bucket never
// admits more than its limit (rules refuse the limits whose rounding would
// lose a request per window: core's store bounds), and n requests cost n
// times one.
func costOf(n, w, limit int64) int64 {
	one := ratemath.MulDiv(1, w, limit)
	if w%limit != 0 {
		one++
	}
	return ratemath.MulDiv(n, one, 1)
}
