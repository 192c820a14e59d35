package hotspot

import (
	"hash/maphash"
	"sync"
	"sync/atomic"

	"github.com/sluicekit/sluice/core/internal/flow"
)

// Shape of a table.
const (
	maxShards = 64 // unless more are needed to keep within maxShardKeys
	// recBits is the bits of an index entry that hold its record's number
	// plus one; the others hold the top bits of the value's tag.
	recBits = 15
	// maxShardKeys is the most records a shard holds: the numbers of its
	// records plus one fit in recBits.
	maxShardKeys = 1<<recBits - 1
	// minShardKeys is the fewest records a shard is given when MaxKeys
	// allows: small tables get fewer shards, so that eviction, which is per
	// shard, still chooses among a useful number of values.
	minShardKeys = 128
	// protectedFifths is the share of a shard's records, in fifths, that
	// the protected segment may hold; probation holds the rest, at least
	// one record.
	protectedFifths = 4
	// firstRecords is the number of records a shard allocates at first; it
	// doubles up to the shard's capacity as values arrive.
	firstRecords = 8
	// secondChances bounds the used records that one demotion moves back
	// to the head of protected before it demotes the tail (see demote).
	secondChances = 8
)

// Segments of a shard's segmented LRU.
const (
	probation = iota // seen once since it was inserted or demoted
	protected        // seen again while in probation
)

// Flags of a record.
const (
	// flagPinned: requests in flight; out of both lists, never evicted.
	flagPinned = 1 << iota
	// flagUsed: in protected, and used since it was last put at its head
	// (see shard.demote).
	flagUsed
)

// table is the bounded key table of a Limiter: one record per tracked value,
// in shards chosen by the value's hash. A value is known by a 64-bit keyed
// hash of it (its id); the value itself is never stored. Every field of a
// shard, records included, is guarded by the shard's mutex; the table's own
// fields never change after newTable.
type table struct {
	seed      maphash.Seed // per table, secret
	shardMask uint64
	shards    []shard
	debts     []debts // of each shard, for a bucket table; nil for Concurrency
	// epoch is that of the Limiter whose limits the fractions of the
	// table's TATs are in: the latest New that changed them (see round).
	epoch atomic.Uint64
}

// id is the identity of a value: its keyed hash. Its low bits choose the
// shard, its high 32 bits are the tag.
type id uint64

// shard is one lock's worth of a table: its records, an open-addressing
// index from id to record, the two segments of its LRU, and the gaps of its
// leaky buckets.
//
// The shards of a table lie next to each other in one slice; a shard is
// three cache lines, 192 bytes, so that the mutexes of neighbouring shards
// are not on one cache line or on the adjacent line that CPUs prefetch in
// pairs, and goroutines working on different shards do not slow each other
// down. The first line holds what a decision writes (the mutex, the LRU
// lists' ends, the front's state), the second what it only reads (the
// slices, the front's value, the capacities), which stays in every CPU's
// cache, the third a leaky bucket's gaps. TestShardSize checks the
// layout.
//
// The front (see the package doc) is a copy of a record's bucket state:
// while a record is the front, its own state is stale and the front's is
// the one read and written; the record is only read (see touch).
type shard struct {
	mu         sync.Mutex
	lists      [2]list      // probation and protected
	frontState flow.Instant // the front record's state
	lastTag    uint32       // tag of the value decided last
	frontRec   int32        // the front record; -1 when none

	recs []record // the records in use; their number only grows, to capRecs
	// slots is the index: a power-of-two ring of entries (see entry), 0
	// for an empty slot, probed linearly from the entry's home and kept at
	// most half full, so that every probe ends at an empty slot.
	slots   []uint32
	front   id    // the value of the front record
	capRecs int32 // most records the shard may hold
	protCap int32 // most records the protected segment may hold

	gaps flow.Holes // of its leaky buckets (the flow rules' holes), owned by records, at most maxGaps
	_    [32]byte
}

// promote makes record i the front, writing the state of the record that
// was back to it.
func (s *shard) promote(i int32) {
	if s.frontRec >= 0 {
		s.recs[s.frontRec].state = s.frontState
	}
	r := &s.recs[i]
	s.front, s.frontRec, s.frontState = r.id, i, r.state
}

// stateOf returns where the state of record i is kept: the front's when i
// is the front.
func (s *shard) stateOf(i int32) *flow.Instant {
	if i == s.frontRec {
		return &s.frontState
	}
	return &s.recs[i].state
}

// list is a doubly-linked list of records through their prev and next
// fields, most recently used at the head. The ends are known by head and
// tail only: the prev of the head and the next of the tail are stale and
// never followed, so evicting the tail writes no other record. The list
// keeps the tail's tag, and each record its prev's, so that evicting the
// tail can look up its index entry while its record is still being read
// from memory: on a table larger than the CPU caches, the two cache misses
// overlap instead of following each other.
type list struct {
	head, tail, n int32
	tailTag       uint32
}

// record is the state of one value. A record is reused for another value
// when it is evicted; gen tells its lives apart, so that a Decision made in
// an earlier life never acts on a later one. 48 bytes, no pointers: the
// garbage collector does not scan records.
type record struct {
	// state is the TAT of the value's bucket, or (Concurrency) requests in
	// flight in state.NS.
	state      flow.Instant
	gen        uint64 // life of the record, incremented on each reuse
	id         id
	prev, next int32
	prevTag    uint32 // tag of prev's id
	seg        uint8  // probation or protected; where a pinned record returns
	flags      uint8  // flagPinned, flagUsed
	gaps       uint16 // the shard's gaps of this record's bucket
}

// newTable returns an empty table of maxKeys records; a bucket table
// (buckets) remembers the debts of the values it evicts.
func newTable(maxKeys int, buckets bool) *table {
	n := 1
	for n < maxShards && maxKeys/(2*n) >= minShardKeys || (maxKeys+n-1)/n > maxShardKeys {
		n *= 2
	}
	t := &table{seed: maphash.MakeSeed(), shardMask: uint64(n - 1), shards: make([]shard, n)}
	if buckets {
		t.debts = make([]debts, n)
		for i := range t.debts {
			t.debts[i].until = noDebt
		}
	}
	for i := range t.shards {
		s := &t.shards[i]
		s.frontRec = -1
		s.capRecs = int32(maxKeys / n)
		if i < maxKeys%n {
			s.capRecs++ // together the shards hold maxKeys, exactly
		}
		s.protCap = min(s.capRecs*protectedFifths/5, s.capRecs-1)
	}
	return t
}

// idOf returns the id of value.
func (t *table) idOf(value string) id {
	return id(maphash.String(t.seed, value))
}

// debtsOf returns the debts of shard si, or nil for a Concurrency table.
func (t *table) debtsOf(si int32) *debts {
	if t.debts == nil {
		return nil
	}
	return &t.debts[si]
}

// shard returns the shard of k and its index.
func (t *table) shard(k id) (int32, *shard) {
	i := int32(uint64(k) & t.shardMask)
	return i, &t.shards[i]
}

// len returns the number of records in use.
func (t *table) len() int {
	n := 0
	for i := range t.shards {
		s := &t.shards[i]
		s.mu.Lock()
		n += len(s.recs)
		s.mu.Unlock()
	}
	return n
}

// tag returns the tag of k: 32 bits of its hash other than those that
// choose its shard. Its top 32-recBits bits are in k's index entry.
func (k id) tag() uint32 { return uint32(k >> 32) }

// entry returns the index entry of record i, of tag: the top bits of tag,
// whose low bits are the entry's home slot (see home), above i+1.
func entry(tag uint32, i int32) uint32 { return tag>>recBits<<recBits | uint32(i+1) }

// home returns the slot where the probe for index entry e starts, of an
// index of mask+1 slots (at most 2*maxShardKeys+2: the 32-recBits bits of
// e's tag cover it).
func home(e, mask uint32) uint32 { return e >> recBits & mask }

// find returns the record of k, or -1.
func (s *shard) find(k id) int32 {
	if len(s.slots) == 0 {
		return -1
	}
	top, mask := entry(k.tag(), -1), uint32(len(s.slots)-1)
	for i := home(top, mask); s.slots[i] != 0; i = (i + 1) & mask {
		if e := s.slots[i]; e&^maxShardKeys == top && s.recs[e&maxShardKeys-1].id == k {
			return int32(e&maxShardKeys - 1)
		}
	}
	return -1
}

// insert gives k a record at the head of probation: a new record while the
// shard has room, else the evicted record of the least recently used value
// of probation (of protected when probation is empty). It returns -1 when
// every record is pinned. The record's state is fresh, or, with the shard's
// debts d (a bucket table), the debt k was evicted with if it is later; an
// evicted bucket whose TAT is later than now leaves its debt in d, heavy
// when it is at least keep ahead of now.
func (s *shard) insert(k id, fresh, now int64, d *debts, keep int64) int32 {
	if d != nil && d.owing(now) {
		fresh = max(fresh, d.take(k, now))
	}
	var i int32
	if n := int32(len(s.recs)); n < s.capRecs {
		s.grow(n + 1)
		s.recs = s.recs[:n+1]
		i = n
	} else {
		l := &s.lists[probation]
		if l.n == 0 {
			l = &s.lists[protected]
			if l.n == 0 {
				return -1
			}
		}
		// Take the tail out of l, its record read before its index entry
		// is removed (see list).
		i = l.tail
		r := &s.recs[i]
		prev, prevTag, old, st := r.prev, r.prevTag, r.id, r.state
		if r.gaps > 0 {
			s.dropGaps(i) // the debt, its TAT, waits for them as if taken
		}
		s.unindex(l.tailTag, i)
		if l.n > 1 {
			l.tail, l.tailTag = prev, prevTag // the new tail's next is stale, never followed
		}
		l.n--
		if i == s.frontRec {
			s.frontRec, st = -1, s.frontState
		}
		if d != nil && st.Ceil() > now {
			d.record(old, st.Ceil(), now, st.Ceil()-now >= keep, s.capRecs) // a bucket not yet full
		}
	}
	r := &s.recs[i]
	*r = record{state: flow.Instant{NS: fresh}, gen: r.gen + 1, id: k, seg: probation}
	s.index(k.tag(), i)
	s.pushFront(i)
	return i
}

// grow makes room for n records and an index that stays at most half full
// with n entries. Both double, so filling a shard allocates O(log capRecs)
// times; a full shard never allocates.
func (s *shard) grow(n int32) {
	if int(n) > cap(s.recs) {
		recs := make([]record, len(s.recs), min(max(2*cap(s.recs), firstRecords), int(s.capRecs)))
		copy(recs, s.recs)
		s.recs = recs
	}
	if int(n) <= len(s.slots)/2 {
		return
	}
	old := s.slots
	s.slots = make([]uint32, max(2*len(old), 2*firstRecords))
	for _, e := range old {
		if e != 0 {
			s.place(e)
		}
	}
}

func (s *shard) index(tag uint32, i int32) { s.place(entry(tag, i)) }

// place puts index entry e in the first empty slot from its home.
func (s *shard) place(e uint32) {
	mask := uint32(len(s.slots) - 1)
	i := home(e, mask)
	for s.slots[i] != 0 {
		i = (i + 1) & mask
	}
	s.slots[i] = e
}

// unindex removes the entry of record i, of tag, from the index, and shifts
// back the entries after it that probed past its slot, so that lookups need
// no tombstones.
func (s *shard) unindex(tag uint32, i int32) {
	mask := uint32(len(s.slots) - 1)
	e := entry(tag, i)
	hole := home(e, mask)
	for s.slots[hole] != e {
		hole = (hole + 1) & mask
	}
	for j := (hole + 1) & mask; s.slots[j] != 0; j = (j + 1) & mask {
		// The entry at j may fill the hole when the hole lies on its
		// probe path: at or after its home, before j.
		if h := home(s.slots[j], mask); (j-h)&mask >= (j-hole)&mask {
			s.slots[hole] = s.slots[j]
			hole = j
		}
	}
	s.slots[hole] = 0
}

// touch records a use of record i: a record of probation is promoted to the
// head of protected; one of protected is flagged used, and stays where it
// is (see demote). A pinned record is in no list; seen again, it will return
// to protected.
func (s *shard) touch(i int32) {
	if r := &s.recs[i]; r.seg != protected || r.flags != flagUsed {
		s.use(i) // a hot record, used and in protected, is only read
	}
}

// use is touch for a record that is not hot.
func (s *shard) use(i int32) {
	r := &s.recs[i]
	switch {
	case r.flags&flagPinned != 0:
		r.seg = protected
	case r.seg == probation:
		s.unlink(i)
		r.seg = protected
		s.pushFront(i)
	default:
		r.flags |= flagUsed
	}
}

// pin takes record i out of its list: it is not evicted until unpin.
func (s *shard) pin(i int32) {
	if r := &s.recs[i]; r.flags&flagPinned == 0 {
		s.unlink(i)
		r.flags = flagPinned
	}
}

// unpin returns record i to the head of its segment.
func (s *shard) unpin(i int32) {
	if r := &s.recs[i]; r.flags&flagPinned != 0 {
		r.flags = 0
		s.pushFront(i)
	}
}

// pushFront links record i at the head of its segment's list. When that
// overfills protected, one record of protected is demoted: one record, as
// one was added.
func (s *shard) pushFront(i int32) {
	s.link(i)
	if l := &s.lists[protected]; s.recs[i].seg == protected && l.n > s.protCap {
		s.demote(l)
	}
}

// demote moves the least recently used record of protected, l, to the head
// of probation by CLOCK (see the package doc): a used tail goes back to the
// head, its flag cleared, up to secondChances times; the tail the loop ends
// at is demoted even if used.
func (s *shard) demote(l *list) {
	d := l.tail
	for range secondChances {
		r := &s.recs[d]
		if r.flags&flagUsed == 0 {
			break
		}
		r.flags = 0
		s.unlink(d)
		s.link(d)
		d = l.tail
	}
	s.unlink(d)
	s.recs[d].seg, s.recs[d].flags = probation, 0
	s.link(d)
}

// link links record i at the head of its segment's list.
func (s *shard) link(i int32) {
	r := &s.recs[i]
	l := &s.lists[r.seg]
	if l.n == 0 {
		l.tail, l.tailTag = i, r.id.tag()
	} else {
		h := &s.recs[l.head]
		h.prev, h.prevTag = i, r.id.tag()
		r.next = l.head
	}
	l.head = i
	l.n++
}

// unlink takes record i out of its segment's list. Taking out an end
// writes only the list: the new end's stale link is never followed.
func (s *shard) unlink(i int32) {
	r := &s.recs[i]
	l := &s.lists[r.seg]
	switch {
	case l.n == 1: // head and tail: the list is empty
	case i == l.head:
		l.head = r.next
	case i == l.tail:
		l.tail, l.tailTag = r.prev, r.prevTag
	default:
		s.recs[r.prev].next = r.next
		n := &s.recs[r.next]
		n.prev, n.prevTag = r.prev, r.prevTag
	}
	l.n--
}

// round rounds the TATs and gaps of t up to whole nanoseconds and returns
// the table's new epoch, for a Limiter of other limits (whose units the
// fractions are not in) about to decide on t (see the package doc).
func (t *table) round() uint64 {
	e := t.epoch.Add(1)
	for i := range t.shards {
		s := &t.shards[i]
		s.mu.Lock()
		s.frontState = flow.Instant{NS: s.frontState.Ceil()}
		for j := range s.recs {
			s.recs[j].state = flow.Instant{NS: s.recs[j].state.Ceil()}
		}
		s.gaps.Round(s.gone)
		s.mu.Unlock()
	}
	return e
}

// maxGaps bounds the gaps a shard remembers (see the package doc).
const maxGaps = 256

// decideGaps is flow.GCRA.DecideAt for record i of s, whose TAT *t is
// ahead of now and which has gaps (flow.Holes.Take): a gap, else the TAT,
// with the sooner retry hint.
func (s *shard) decideGaps(d *Decision, b *flow.GCRA, i int32, t *flow.Instant, now, n int64) {
	taken, retry, left := s.gaps.Take(&d.Decision, b, i, *t, now, n)
	s.recs[i].gaps = uint16(left)
	if !taken {
		*t = b.DecideAt(&d.Decision, *t, now, n, true)
		if retry >= 0 {
			d.RetryAfter = min(d.RetryAfter, retry)
		}
	}
}

// dropGaps forgets the gaps of record i.
func (s *shard) dropGaps(i int32) {
	s.gaps.Forget(i)
	s.recs[i].gaps = 0
}

// gone counts out a gap of record i that was forgotten.
func (s *shard) gone(i int32) { s.recs[i].gaps-- }
