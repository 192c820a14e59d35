package window

import (
	"fmt"
	"math"
	"sync/atomic"
	"time"
)

// MaxBuckets bounds the buckets of a window that is summed on each
// decision (a flow rule's or a breaker's).
const MaxBuckets = 1000

// Event is a kind of count kept in every bucket.
type Event int

// The events a Bucket counts.
const (
	Pass     Event = iota // requests admitted
	Block                 // requests rejected
	Complete              // requests finished (Exit)
	Error                 // requests finished with an error
	RT                    // total response time of completed requests, ns
	numEvents
)

// Bucket holds the counts of one time slice. Its start never changes: a new
// round gets a new Bucket.
type Bucket struct {
	start  int64
	counts [numEvents]atomic.Int64
	minRT  atomic.Int64 // math.MaxInt64 until a completion is recorded
	peak   atomic.Int64 // highest concurrency recorded
}

func newBucket(start int64) *Bucket {
	b := &Bucket{start: start}
	b.minRT.Store(math.MaxInt64)
	return b
}

// Start returns the start of the bucket's time slice, in nanoseconds.
func (b *Bucket) Start() int64 { return b.start }

// Get returns the count of ev.
func (b *Bucket) Get(ev Event) int64 { return b.counts[ev].Load() }

// MinRT returns the smallest response time recorded, math.MaxInt64 if none.
func (b *Bucket) MinRT() int64 { return b.minRT.Load() }

// RaisePeak records concurrency c if it is the highest seen in the bucket.
func (b *Bucket) RaisePeak(c int64) { raise(&b.peak, c) }

// raise stores x in v unless v holds x or more.
func raise(v *atomic.Int64, x int64) {
	for p := v.Load(); x > p && !v.CompareAndSwap(p, x); p = v.Load() {
	}
}

// LeapArray is a ring of buckets covering a sliding interval. All methods are
// safe for concurrent use; Add is lock-free.
type LeapArray struct {
	bucketLen int64
	interval  int64
	slots     []atomic.Pointer[Bucket]
	latest    atomic.Int64 // start of the newest bucket, raised before it is installed
	// cur caches the newest bucket installed, so that the common case (now
	// falls in the newest bucket) needs neither a division nor a slot load.
	cur atomic.Pointer[Bucket]
	// totals, for an array made by NewMarked, returns the caller's totals,
	// which a bucket records when it is installed.
	totals func() Counts
}

// Counts are counts by Event.
type Counts [numEvents]int64

// New returns a LeapArray of buckets buckets covering interval. interval
// must be a positive whole number of nanoseconds per bucket.
func New(buckets int, interval time.Duration) (*LeapArray, error) {
	if buckets < 1 {
		return nil, fmt.Errorf("window: buckets must be >= 1, got %d", buckets)
	}
	if interval <= 0 || int64(interval)%int64(buckets) != 0 {
		return nil, fmt.Errorf("window: interval %s must be positive and divisible into %d buckets", interval, buckets)
	}
	a := &LeapArray{
		bucketLen: int64(interval) / int64(buckets),
		interval:  int64(interval),
		slots:     make([]atomic.Pointer[Bucket], buckets),
	}
	a.latest.Store(math.MinInt64)
	return a, nil
}

// NewMarked returns a LeapArray whose buckets count nothing themselves:
// the caller keeps totals by event since the array began, which only grow
// and which totals returns, and each bucket records them when it is
// installed, before any count of its time is added to them. A span's
// counts are then the totals at its end less those its oldest bucket
// recorded (MarkedOver), and a count costs the caller one atomic add (to
// its total) instead of two. The caller takes the bucket of now (Current)
// before it adds to a total, so that a bucket installed then records the
// totals without that count; minimum response times (LowerMinRT) and
// peaks (RaisePeak) are kept in the buckets as in any array. Add, AddRT,
// Undo, the sums and SnapshotOver are not for such an array.
func NewMarked(buckets int, interval time.Duration, totals func() Counts) (*LeapArray, error) {
	a, err := New(buckets, interval)
	if err != nil {
		return nil, err
	}
	a.totals = totals
	return a, nil
}

// Interval returns the span the array covers.
func (a *LeapArray) Interval() time.Duration { return time.Duration(a.interval) }

// BucketLen returns the span of one bucket.
func (a *LeapArray) BucketLen() time.Duration { return time.Duration(a.bucketLen) }

// Buckets returns the number of buckets.
func (a *LeapArray) Buckets() int { return len(a.slots) }

// Newest returns the start of the newest bucket, math.MinInt64 before the
// first. It is raised before a bucket of a new round is installed, so a
// caller who summed the window of bucket b and then reads Newest() ==
// b.Start() knows that its sum read every bucket of that window.
func (a *LeapArray) Newest() int64 { return a.latest.Load() }

// Latest returns the newest bucket installed, nil before the first: an
// array made by NewMarked counts there what its caller adds to its totals
// without taking the bucket of now (Current).
func (a *LeapArray) Latest() *Bucket { return a.cur.Load() }

// startOf returns the start of the bucket now falls in, never earlier than
// the newest bucket.
func (a *LeapArray) startOf(now int64) int64 { return max(Floor(now, a.bucketLen), a.latest.Load()) }

// Floor returns the start of the aligned period of length p holding t.
func Floor(t, p int64) int64 {
	r := t % p
	if r < 0 {
		r += p
	}
	return t - r
}

func (a *LeapArray) slot(start int64) *atomic.Pointer[Bucket] {
	i := (start / a.bucketLen) % int64(len(a.slots))
	if i < 0 {
		i += int64(len(a.slots))
	}
	return &a.slots[i]
}

// Cached is Current when now is in the newest bucket or earlier, nil when
// Current must look in the slots: small enough to be inlined.
func (a *LeapArray) Cached(now int64) *Bucket {
	if c := a.cur.Load(); c != nil && now-c.start < a.bucketLen && a.latest.Load() == c.start {
		return c
	}
	return nil
}

// Current returns the bucket for now, replacing a stale bucket in its slot.
// When now is earlier than the newest bucket, the newest bucket is returned.
func (a *LeapArray) Current(now int64) *Bucket {
	if c := a.Cached(now); c != nil {
		return c
	}
	ws := a.startOf(now)
	s := a.slot(ws)
	for {
		b := s.Load()
		if b != nil && b.start >= ws {
			// b.start > ws only when another goroutine moved to a later round
			// of this slot after startOf: count there rather than drop.
			return b
		}
		// Publish the new round before installing it, so that a reader who
		// still sees Newest at or before its bucket knows no slot has been
		// replaced by a later round (see Newest).
		raise(&a.latest, ws)
		nb := newBucket(ws)
		if a.totals != nil {
			for i, v := range a.totals() {
				nb.counts[i].Store(v)
			}
		}
		if s.CompareAndSwap(b, nb) {
			a.raiseCur(nb)
			return nb
		}
		// Another writer replaced b; its bucket is at least as new as ours
		// unless it came from an older reading, in which case we replace it
		// in turn. Each retry sees a strictly newer bucket, so this ends.
	}
}

// raiseCur makes b the cached newest bucket unless a newer one is cached.
func (a *LeapArray) raiseCur(b *Bucket) {
	for c := a.cur.Load(); (c == nil || c.start < b.start) && !a.cur.CompareAndSwap(c, b); c = a.cur.Load() {
	}
}

// Add adds v to event ev at now and returns the bucket that holds the count.
// A count is never lost: if the bucket is replaced by a newer round while the
// add is in flight, the count is added again to the newer bucket.
func (a *LeapArray) Add(now int64, ev Event, v int64) *Bucket {
	b := a.Cached(now)
	if b == nil {
		b = a.Current(now)
	}
	b.counts[ev].Add(v)
	if a.cur.Load() == b && a.latest.Load() == b.start {
		return b // b is the newest bucket: installed, and inside its own interval
	}
	return a.settle(now, b, func(nb *Bucket) { nb.counts[ev].Add(v) })
}

// settle is Add's and AddRT's check, after a write to b that is not the
// newest bucket, that b is still installed and inside the interval of the
// newest. When it was replaced meanwhile, or the writer was held up long
// enough for the array to move a whole interval past b (b then installed
// stale, outside every later window), the write is redone on the newest
// bucket by redo.
func (a *LeapArray) settle(now int64, b *Bucket, redo func(*Bucket)) *Bucket {
	if a.slot(b.start).Load() == b && b.start > a.latest.Load()-a.interval {
		return b
	}
	nb := a.Current(now)
	redo(nb)
	return nb
}

// Undo subtracts v from event ev of bucket b, which an earlier Add returned,
// unless b has been replaced since (the count left the window with it).
func (a *LeapArray) Undo(b *Bucket, ev Event, v int64) {
	if a.slot(b.start).Load() == b {
		b.counts[ev].Add(-v)
	}
}

// UndoAt is Undo on the bucket starting at start, if it is installed.
func (a *LeapArray) UndoAt(start int64, ev Event, v int64) {
	if b := a.slot(start).Load(); b != nil && b.start == start {
		b.counts[ev].Add(-v)
	}
}

// AddRT records a completion at now: Complete += 1, RT += rt, minimum RT,
// and Error += 1 when failed.
func (a *LeapArray) AddRT(now int64, rt int64, failed bool) {
	b := a.Cached(now)
	if b == nil {
		b = a.Current(now)
	}
	b.addRT(rt, failed)
	if a.cur.Load() != b || a.latest.Load() != b.start {
		a.settle(now, b, func(nb *Bucket) { nb.addRT(rt, failed) })
	}
}

// addRT records a completion of response time rt in b.
func (b *Bucket) addRT(rt int64, failed bool) {
	b.counts[Complete].Add(1)
	if rt != 0 {
		// A response shorter than the clock's resolution (a coarse
		// clock's) adds nothing: no atomic add for it.
		b.counts[RT].Add(rt)
	}
	if failed {
		b.counts[Error].Add(1)
	}
	b.LowerMinRT(rt)
}

// LowerMinRT records response time rt if it is the smallest seen in the
// bucket.
func (b *Bucket) LowerMinRT(rt int64) {
	for m := b.minRT.Load(); rt < m && !b.minRT.CompareAndSwap(m, rt); m = b.minRT.Load() {
	}
}

// Sum returns the total of ev over the whole interval ending at now.
func (a *LeapArray) Sum(now int64, ev Event) int64 {
	return a.SumOver(now, time.Duration(a.interval), ev)
}

// span returns d as nanoseconds clamped to [0, interval]: a span longer than
// the interval would reach stale buckets of earlier rounds still in the ring.
func (a *LeapArray) span(d int64) int64 { return min(max(d, 0), a.interval) }

// SumOver returns the total of ev over the buckets of the last span ending at
// now (span rounded up to whole buckets, capped at the interval), and also
// of any newer bucket (installed by a goroutine whose clock is ahead), so a
// check made at now never misses a reservation that belongs to its window.
func (a *LeapArray) SumOver(now int64, span time.Duration, ev Event) int64 {
	return a.SumBetween(a.startOf(now)-a.span(int64(span)), math.MaxInt64, ev)
}

// SumBetween returns the total of ev over the buckets whose start lies in
// (after, before).
func (a *LeapArray) SumBetween(after, before int64, ev Event) int64 {
	var sum int64
	for i := range a.slots {
		b := a.slots[i].Load()
		if b != nil && b.start > after && b.start < before {
			sum += b.counts[ev].Load()
		}
	}
	return sum
}

// Snapshot is the totals of a span of buckets.
type Snapshot struct {
	Pass, Block, Complete, Error int64
	RT                           int64 // total response time, ns
	MinRT                        int64 // smallest response time, ns; 0 when none
	Peak                         int64 // highest concurrency recorded
}

// SnapshotOver returns the totals of the buckets of the last span ending at
// now (span rounded up to whole buckets, capped at the interval).
func (a *LeapArray) SnapshotOver(now int64, span time.Duration) Snapshot {
	s, _, _ := a.over(now, span)
	return s
}

// over is SnapshotOver, also returning the oldest bucket of the span and
// the oldest after it, if any.
func (a *LeapArray) over(now int64, span time.Duration) (s Snapshot, first, next *Bucket) {
	ws, sp := a.startOf(now), a.span(int64(span))
	s.MinRT = math.MaxInt64
	for i := range a.slots {
		b := a.slots[i].Load()
		switch {
		case b == nil || b.start <= ws-sp:
		case b.start > ws:
			if next == nil || b.start < next.start {
				next = b
			}
		default:
			if first == nil || b.start < first.start {
				first = b
			}
			s.Pass += b.counts[Pass].Load()
			s.Block += b.counts[Block].Load()
			s.Complete += b.counts[Complete].Load()
			s.Error += b.counts[Error].Load()
			s.RT += b.counts[RT].Load()
			s.MinRT = min(s.MinRT, b.minRT.Load())
			s.Peak = max(s.Peak, b.peak.Load())
		}
	}
	if s.MinRT == math.MaxInt64 {
		s.MinRT = 0
	}
	return s, first, next
}

// MarkedOver is SnapshotOver for an array made by NewMarked: the totals
// at the end of the span (those the bucket after it recorded, or the
// caller's now) less those its oldest bucket recorded. A count added
// between a bucket's installing and its recording of the totals counts in
// that bucket rather than the one before.
func (a *LeapArray) MarkedOver(now int64, span time.Duration) Snapshot {
	s, first, next := a.over(now, span)
	if first == nil {
		return s
	}
	end := a.totals // read after the buckets: never below their marks
	if next != nil {
		end = next.marks
	}
	e, start := end(), first.marks()
	diff := func(ev Event) int64 { return max(e[ev]-start[ev], 0) }
	s.Pass, s.Block, s.Complete, s.Error, s.RT = diff(Pass), diff(Block), diff(Complete), diff(Error), diff(RT)
	return s
}

// marks returns the counts of b, which are the totals it recorded in an
// array made by NewMarked.
func (b *Bucket) marks() Counts {
	var c Counts
	for i := range c {
		c[i] = b.counts[i].Load()
	}
	return c
}

// Merge returns the totals of s and o together, as if their buckets were
// one: counts add up (see Plus), MinRT is the smaller of those recorded,
// Peak the higher.
func (s Snapshot) Merge(o Snapshot) Snapshot {
	minRT := min(s.MinRT, o.MinRT)
	if s.Complete == 0 || o.Complete == 0 {
		minRT = max(s.MinRT, o.MinRT) // only one side recorded one, or none did
	}
	return Snapshot{Plus(s.Pass, o.Pass), Plus(s.Block, o.Block), Plus(s.Complete, o.Complete), Plus(s.Error, o.Error), Plus(s.RT, o.RT), minRT, max(s.Peak, o.Peak)}
}

// Plus returns a + b, two counts (not negative), or math.MaxInt64 when the
// sum overflows: totals saturate rather than wrap.
func Plus(a, b int64) int64 {
	if s := a + b; s >= a {
		return s
	}
	return math.MaxInt64
}

// Count returns the count of ev in the bucket starting at start, or 0 when
// its slot holds another round.
func (a *LeapArray) Count(start int64, ev Event) int64 {
	if b := a.slot(start).Load(); b != nil && b.start == start {
		return b.counts[ev].Load()
	}
	return 0
}

// Each calls fn for each bucket of the interval ending at now, oldest first,
// with its start; slots holding no bucket of the interval are skipped.
func (a *LeapArray) Each(now int64, fn func(b *Bucket)) {
	ws := a.startOf(now)
	for i := int64(len(a.slots)) - 1; i >= 0; i-- {
		start := ws - i*a.bucketLen
		if b := a.slot(start).Load(); b != nil && b.start == start {
			fn(b)
		}
	}
}
