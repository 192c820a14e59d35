package window

import (
	"math"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The tests use an array of 4 buckets of 100ns: interval 400ns.
const (
	tBuckets  = 4
	tLen      = 100
	tInterval = tBuckets * tLen
)

func newArray(t testing.TB) *LeapArray {
	t.Helper()
	a, err := New(tBuckets, tInterval)
	require.NoError(t, err)
	return a
}

// add is one Add of a test: v of ev at time at.
type add struct {
	at int64
	ev Event
	v  int64
}

func addAll(a *LeapArray, adds []add) {
	for _, x := range adds {
		a.Add(x.at, x.ev, x.v)
	}
}

func TestNew(t *testing.T) {
	tests := []struct {
		buckets  int
		interval time.Duration
		wantErr  string
		wantLen  time.Duration
	}{
		{10, time.Second, "", 100 * time.Millisecond},
		{1, time.Nanosecond, "", time.Nanosecond},
		{3, 3, "", 1},
		{0, time.Second, "buckets must be >= 1", 0},
		{-1, time.Second, "buckets must be >= 1", 0},
		{10, 0, "must be positive", 0},
		{10, -time.Second, "must be positive", 0},
		{3, time.Second, "divisible into 3 buckets", 0},
		{10, 5, "divisible into 10 buckets", 0},
	}
	for _, tt := range tests {
		a, err := New(tt.buckets, tt.interval)
		if tt.wantErr != "" {
			assert.ErrorContains(t, err, tt.wantErr, "New(%d, %s)", tt.buckets, tt.interval)
			assert.Nil(t, a)
			continue
		}
		require.NoError(t, err)
		assert.Equal(t, tt.wantLen, a.BucketLen())
		assert.Equal(t, tt.interval, a.Interval())
		assert.Equal(t, tt.buckets, a.Buckets())
	}
}

func TestBucketMapping(t *testing.T) {
	tests := []struct {
		now       int64
		wantStart int64
		wantSlot  int
	}{
		{0, 0, 0},
		{1, 0, 0},
		{99, 0, 0},
		{100, 100, 1},
		{250, 200, 2},
		{399, 300, 3},
		{400, 400, 0}, // next round, same slot as 0
		{1234, 1200, 0},
		{-1, -100, 3},
		{-99, -100, 3},
		{-100, -100, 3},
		{-101, -200, 2},
		{-400, -400, 0},
		{-401, -500, 3},
	}
	for _, tt := range tests {
		a := newArray(t) // fresh: no newer bucket to clamp to
		b := a.Current(tt.now)
		assert.Equal(t, tt.wantStart, b.Start(), "start of %d", tt.now)
		assert.Same(t, b, a.slots[tt.wantSlot].Load(), "slot of %d", tt.now)
	}
}

func TestLazyReset(t *testing.T) {
	a := newArray(t)
	old := a.Add(50, Pass, 5)
	a.Add(150, Pass, 1)

	// The stale bucket is still in its slot, but no sum counts it once the
	// window has moved past it.
	assert.Equal(t, int64(6), a.Sum(399, Pass))
	assert.Equal(t, int64(1), a.Sum(400, Pass), "bucket 0 left the window at 400")
	assert.Same(t, old, a.slots[0].Load(), "a sum does not replace buckets")

	// The first writer of the slot's new round replaces it with an empty one.
	nb := a.Add(420, Pass, 2)
	assert.NotSame(t, old, nb)
	assert.Equal(t, int64(400), nb.Start())
	assert.Equal(t, int64(2), nb.Get(Pass))
	assert.Equal(t, int64(5), old.Get(Pass), "the old bucket is left untouched")
	assert.Equal(t, int64(3), a.Sum(420, Pass))

	// A slot untouched for many rounds is replaced just the same.
	far := a.Add(10*tInterval+170, Pass, 7)
	assert.Equal(t, int64(10*tInterval+100), far.Start())
	assert.Equal(t, int64(7), far.Get(Pass))
	assert.Equal(t, int64(7), a.Sum(10*tInterval+170, Pass))
}

func TestSumAndSumOver(t *testing.T) {
	a := newArray(t)
	addAll(a, []add{
		{0, Pass, 1}, {99, Pass, 1}, // bucket 0: 2
		{100, Pass, 4},                   // bucket 100: 4
		{250, Pass, 8},                   // bucket 200: 8
		{300, Pass, 16}, {301, Block, 3}, // bucket 300: 16 pass, 3 block
	})
	sums := []struct {
		now  int64
		ev   Event
		want int64
	}{
		{399, Pass, 30},
		{399, Block, 3},
		{399, Complete, 0},
		{350, Pass, 30},
		{400, Pass, 28},  // bucket 0 left
		{500, Pass, 24},  // bucket 100 left
		{699, Pass, 16},  // only bucket 300
		{700, Pass, 0},   // all left
		{10000, Pass, 0}, // long after
	}
	for _, tt := range sums {
		assert.Equal(t, tt.want, a.Sum(tt.now, tt.ev), "Sum(%d, %d)", tt.now, tt.ev)
	}
	overs := []struct {
		now  int64
		span time.Duration
		want int64
	}{
		{399, 0, 0}, // no bucket
		{399, 1, 16},
		{399, tLen, 16},
		{399, tLen + 1, 24}, // rounded up to 2 buckets
		{399, 2 * tLen, 24},
		{399, 3 * tLen, 28},
		{399, tInterval, 30},
		{500, 2 * tLen, 0},  // buckets 400 and 500: empty
		{500, 3 * tLen, 16}, // and 300
	}
	for _, tt := range overs {
		assert.Equal(t, tt.want, a.SumOver(tt.now, tt.span, Pass), "SumOver(%d, %d)", tt.now, tt.span)
	}
	betweens := []struct {
		after, before int64
		want          int64
	}{
		{-1, 400, 30},
		{-1, 300, 14}, // the newest bucket excluded
		{0, 300, 12},  // bounds are exclusive
		{-100, 0, 0},
		{100, 200, 0},
		{99, 201, 12},
		{300, 1000, 0},
	}
	for _, tt := range betweens {
		assert.Equal(t, tt.want, a.SumBetween(tt.after, tt.before, Pass), "SumBetween(%d, %d)", tt.after, tt.before)
	}
}

// TestSumOverCappedAtInterval: a span longer than the interval must not
// reach buckets of an earlier round still sitting in the ring.
func TestSumOverCappedAtInterval(t *testing.T) {
	a := newArray(t)
	a.Add(50, Pass, 100) // bucket 0 (slot 0): a round behind bucket 400
	a.Add(520, Pass, 1)  // bucket 500 (slot 1)
	a.AddRT(520, 7, false)
	for _, span := range []time.Duration{tInterval, tInterval + 1, 2 * tInterval, time.Hour} {
		assert.Equal(t, int64(1), a.SumOver(520, span, Pass), "SumOver span %d", span)
		s := a.SnapshotOver(520, span)
		assert.Equal(t, int64(1), s.Pass, "SnapshotOver span %d", span)
	}
	// A negative span covers no bucket of the interval.
	assert.Zero(t, a.SumOver(520, -tLen, Pass))
	assert.Equal(t, Snapshot{}, a.SnapshotOver(520, -tLen))
}

func TestSnapshotOver(t *testing.T) {
	a := newArray(t)
	// In time order: a reading earlier than the newest bucket counts there.
	a.Add(10, Pass, 3)
	a.AddRT(20, 50, false)
	a.Current(30).RaisePeak(5)
	a.Add(110, Pass, 2)
	a.Add(120, Block, 4)
	a.AddRT(130, 30, true)
	a.AddRT(140, 90, false)
	a.Current(150).RaisePeak(9)
	a.Current(160).RaisePeak(2) // lower: ignored
	a.Add(310, Pass, 1)
	a.AddRT(320, 40, true)
	a.Current(330).RaisePeak(1)

	tests := []struct {
		now  int64
		span time.Duration
		want Snapshot
	}{
		{399, tInterval, Snapshot{Pass: 6, Block: 4, Complete: 4, Error: 2, RT: 210, MinRT: 30, Peak: 9}},
		{399, tLen, Snapshot{Pass: 1, Complete: 1, Error: 1, RT: 40, MinRT: 40, Peak: 1}},
		{399, 2 * tLen, Snapshot{Pass: 1, Complete: 1, Error: 1, RT: 40, MinRT: 40, Peak: 1}}, // bucket 200 empty
		{399, 3 * tLen, Snapshot{Pass: 3, Block: 4, Complete: 3, Error: 2, RT: 160, MinRT: 30, Peak: 9}},
		{450, tInterval, Snapshot{Pass: 3, Block: 4, Complete: 3, Error: 2, RT: 160, MinRT: 30, Peak: 9}}, // bucket 0 left
		{600, tInterval, Snapshot{Pass: 1, Complete: 1, Error: 1, RT: 40, MinRT: 40, Peak: 1}},
		{700, tInterval, Snapshot{}}, // nothing: MinRT reads 0, not MaxInt64
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, a.SnapshotOver(tt.now, tt.span), "now=%d span=%d", tt.now, tt.span)
	}
}

// marked is a marked array and the totals it records, counted as a
// caller of NewMarked counts them.
type marked struct {
	a      *LeapArray
	totals Counts
}

func newMarked(t *testing.T) *marked {
	m := &marked{}
	a, err := NewMarked(tBuckets, tInterval, func() Counts { return m.totals })
	require.NoError(t, err)
	m.a = a
	return m
}

func (m *marked) add(now int64, ev Event, v int64) {
	m.a.Current(now)
	m.totals[ev] += v
}

func (m *marked) addRT(now, rt int64, failed bool) {
	b := m.a.Current(now)
	m.totals[Complete]++
	m.totals[RT] += rt
	if failed {
		m.totals[Error]++
	}
	b.LowerMinRT(rt)
}

// TestMarkedOver: a marked array's snapshots are those of an array that
// counts the same events in its buckets, at every time and span, before
// the newest bucket too.
func TestMarkedOver(t *testing.T) {
	a, m := newArray(t), newMarked(t)
	for _, ev := range []struct {
		at, v int64
		ev    Event
		rt    bool
	}{
		{10, 3, Pass, false}, {20, 50, 0, true}, {110, 2, Pass, false}, {120, 4, Block, false},
		{130, 30, Error, true}, {140, 90, 0, true}, {310, 1, Pass, false}, {320, 40, Error, true},
		{330, 0, Pass, false}, {750, 5, Pass, false}, {760, 0, 0, true},
	} {
		switch {
		case ev.rt:
			a.AddRT(ev.at, ev.v, ev.ev == Error)
			m.addRT(ev.at, ev.v, ev.ev == Error)
		default:
			a.Add(ev.at, ev.ev, ev.v)
			m.add(ev.at, ev.ev, ev.v)
		}
		a.Current(ev.at).RaisePeak(ev.at % 7)
		m.a.Current(ev.at).RaisePeak(ev.at % 7)
		for now := ev.at - 2*tInterval; now <= ev.at+2*tInterval; now += tLen / 2 {
			for _, span := range []time.Duration{tLen, 2 * tLen, 3 * tLen, tInterval} {
				require.Equal(t, a.SnapshotOver(now, span), m.a.MarkedOver(now, span), "after %d: now=%d span=%d", ev.at, now, span)
			}
		}
	}
	assert.Equal(t, Snapshot{Pass: 5, Complete: 1, Peak: 4}, m.a.MarkedOver(799, tInterval))
}

func TestBucketAccessors(t *testing.T) {
	a := newArray(t)
	b := a.Current(0)
	assert.Equal(t, int64(math.MaxInt64), b.MinRT(), "no completion yet")
	assert.Zero(t, b.peak.Load())
	b.RaisePeak(3)
	b.RaisePeak(2)
	assert.Equal(t, int64(3), b.peak.Load())
	a.AddRT(0, 12, false)
	a.AddRT(0, 15, false)
	assert.Equal(t, int64(12), b.MinRT())
	assert.Equal(t, int64(27), b.Get(RT))
	assert.Equal(t, int64(2), b.Get(Complete))
	assert.Zero(t, b.Get(Error))
	a.AddRT(0, 0, true) // shorter than the clock's resolution: counted, with no time
	assert.Equal(t, int64(0), b.MinRT())
	assert.Equal(t, int64(27), b.Get(RT))
	assert.Equal(t, int64(3), b.Get(Complete))
	assert.Equal(t, int64(1), b.Get(Error))
}

func TestEach(t *testing.T) {
	a := newArray(t)
	starts := func(now int64) []int64 {
		var got []int64
		a.Each(now, func(b *Bucket) { got = append(got, b.Start()) })
		return got
	}
	addAll(a, []add{{10, Pass, 1}, {210, Pass, 2}, {320, Pass, 3}})
	assert.Equal(t, []int64{0, 200, 300}, starts(399), "oldest first; 100 has no bucket")
	assert.Equal(t, []int64{200, 300}, starts(450), "bucket 0 left, 400 not made yet")
	a.Add(420, Pass, 4)
	assert.Equal(t, []int64{200, 300, 400}, starts(450))
	assert.Equal(t, []int64{200, 300, 400}, starts(399), "an earlier reading walks the newest window")
	assert.Equal(t, []int64{300, 400}, starts(650))
	assert.Equal(t, []int64{400}, starts(750))
	assert.Nil(t, starts(2000))
}

// TestClockBackwards: a reading earlier than the newest bucket is counted in
// the newest bucket, and sums taken at any earlier reading still see it.
func TestClockBackwards(t *testing.T) {
	a := newArray(t)
	a.Add(1050, Pass, 1) // newest bucket: 1000
	tests := []struct {
		at        int64
		wantStart int64
	}{
		{999, 1000},
		{700, 1000},
		{0, 1000},
		{-5000, 1000},
		{1099, 1000},
		{1100, 1100}, // time caught up: a new bucket
		{1000, 1100}, // and that one is now the newest
	}
	var total int64 = 1
	for _, tt := range tests {
		b := a.Add(tt.at, Pass, 1)
		total++
		assert.Equal(t, tt.wantStart, b.Start(), "Add at %d", tt.at)
		for _, at := range []int64{tt.at, 0, 1100} {
			assert.Equal(t, total, a.Sum(at, Pass), "Sum at %d after the add at %d", at, tt.at)
		}
	}
	assert.Equal(t, Snapshot{Pass: total}, a.SnapshotOver(-1, tInterval))
	var n int
	a.Each(-1, func(*Bucket) { n++ })
	assert.Equal(t, 2, n, "Each at an early reading walks the window of the newest bucket")
}

// TestCached: Cached is Current's bucket when that is the newest one
// installed (now in it, or earlier), nil when Current must look in the
// slots: before the first bucket, and once now is past the newest.
func TestCached(t *testing.T) {
	a := newArray(t)
	assert.Nil(t, a.Cached(1050), "no bucket yet")
	b := a.Current(1050)
	for _, at := range []int64{1000, 1099, 700, -5000} {
		assert.Same(t, b, a.Cached(at), "at %d", at)
		assert.Same(t, a.Current(at), a.Cached(at), "at %d", at)
	}
	assert.Nil(t, a.Cached(1100), "past the newest bucket")
	nb := a.Current(1100)
	assert.Same(t, nb, a.Cached(1150))
}

// TestCountNotLostWhenBucketReplaced plays the interleaving Add guards
// against: a writer took bucket b, another writer replaced b with a newer
// round, then the first writer's count lands in b. settle must move it.
func TestCountNotLostWhenBucketReplaced(t *testing.T) {
	tests := []struct {
		name    string
		prepare func(a *LeapArray) *Bucket // returns the in-flight writer's bucket
		at      int64                      // the in-flight writer's reading
		want    int64                      // start of the bucket the count ends in
	}{
		{
			name: "slot replaced by the next round",
			prepare: func(a *LeapArray) *Bucket {
				b := a.Current(50)
				a.Add(450, Pass, 1) // replaces b
				return b
			},
			at:   50,
			want: 400,
		},
		{
			name: "bucket installed after the array moved a whole interval on",
			prepare: func(a *LeapArray) *Bucket {
				a.Add(950, Pass, 1) // newest: 900
				// A writer that read the clock at 250 before the 900 bucket
				// existed installs bucket 200 into the slot it finds empty.
				b := newBucket(200)
				a.slot(200).Store(b)
				return b
			},
			at:   250,
			want: 900,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := newArray(t)
			b := tt.prepare(a)
			before := a.Sum(a.latest.Load(), Pass)
			// The rest of Add, as it runs in the writer held up above.
			b.counts[Pass].Add(1)
			got := a.settle(tt.at, b, func(nb *Bucket) { nb.counts[Pass].Add(1) })
			assert.Equal(t, tt.want, got.Start())
			assert.Equal(t, before+1, a.Sum(a.latest.Load(), Pass), "the count is in the window")
			// Undo of what Add returned takes it back out.
			a.Undo(got, Pass, 1)
			assert.Equal(t, before, a.Sum(a.latest.Load(), Pass))
		})
	}
}

func TestSettleKeepsInstalledBucket(t *testing.T) {
	a := newArray(t)
	b := a.Add(50, Pass, 1)
	a.Add(350, Pass, 1) // newest 300: bucket 0 still in the window
	got := a.settle(50, b, func(*Bucket) { t.Fatal("redo called for a live bucket") })
	assert.Same(t, b, got)
}

func TestUndo(t *testing.T) {
	a := newArray(t)
	b := a.Add(50, Pass, 3)
	a.Undo(b, Pass, 1)
	assert.Equal(t, int64(2), a.Sum(50, Pass))

	// Once b is replaced its counts left the window: Undo must not touch
	// the bucket now in the slot.
	nb := a.Add(450, Pass, 5)
	a.Undo(b, Pass, 2)
	assert.Equal(t, int64(5), nb.Get(Pass))
	assert.Equal(t, int64(2), b.Get(Pass), "b is no longer counted anywhere")
}

// TestConcurrentAdd: 64 goroutines adding at times spread over the buckets of
// one interval, then of the next round (every slot replaced under
// contention), lose no count.
func TestConcurrentAdd(t *testing.T) {
	const (
		goroutines = 64
		perG       = 2000
	)
	a := newArray(t)
	for round, base := range []int64{0, tInterval} {
		var wg sync.WaitGroup
		for g := range goroutines {
			wg.Go(func() {
				for i := range perG {
					now := base + int64((g*perG+i)%tInterval)
					a.Add(now, Pass, 1)
					if i%4 == 0 {
						a.AddRT(now, 10, i%8 == 0)
					}
				}
			})
		}
		wg.Wait()
		end := base + tInterval - 1
		s := a.SnapshotOver(end, tInterval)
		assert.Equal(t, int64(goroutines*perG), s.Pass, "round %d", round)
		assert.Equal(t, int64(goroutines*perG/4), s.Complete, "round %d", round)
		assert.Equal(t, int64(goroutines*perG/8), s.Error, "round %d", round)
		assert.Equal(t, int64(goroutines*perG/4*10), s.RT, "round %d", round)
		assert.Equal(t, int64(10), s.MinRT, "round %d", round)
	}
}

func TestFloor(t *testing.T) {
	tests := []struct{ t, p, want int64 }{
		{0, 10, 0}, {9, 10, 0}, {10, 10, 10}, {-1, 10, -10}, {-10, 10, -10}, {-11, 10, -20},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, Floor(tt.t, tt.p), "Floor(%d, %d)", tt.t, tt.p)
	}
}
