package hotspot

import (
	"cmp"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core/internal/flow"
)

const (
	ms = time.Millisecond
	s  = time.Second
)

// step is one Acquire of a table test and the Decision it must get.
type step struct {
	at        time.Duration // the reading of the clock
	value     string
	n         int64 // default 1
	ok        bool
	limit     int64 // Decision.Limit: the value's limit
	remaining int64
	retry     time.Duration // RetryAfter
	wait      time.Duration // Wait
}

// play runs steps against l in order, comparing each decision's fields,
// and returns the decisions.
func play(t *testing.T, l *Limiter, steps []step) []Decision {
	t.Helper()
	ds := make([]Decision, len(steps))
	for i, st := range steps {
		st.n = cmp.Or(st.n, 1)
		d := l.Acquire(int64(st.at), st.value, st.n)
		got := step{at: st.at, value: st.value, n: st.n, ok: d.OK, limit: d.Limit, remaining: d.Remaining, retry: d.RetryAfter, wait: d.Wait}
		assert.Equal(t, st, got, "step %d: Acquire(%s, %q, %d)", i, st.at, st.value, st.n)
		ds[i] = d
	}
	return ds
}

func TestTokenBucket(t *testing.T) {
	// 2 per second, burst 1: a value's bucket holds 3 tokens and refills
	// one every 500ms. vip may make 5 per second (and holds 5+1), abuser
	// none.
	l := mustNew(t, Config{Limit: 2, Window: s, Burst: 1, Overrides: map[string]int64{"vip": 5, "abuser": 0}}, nil)
	play(t, l, []step{
		{at: 0, value: "a", ok: true, limit: 2, remaining: 2},
		{at: 0, value: "a", ok: true, limit: 2, remaining: 1},
		{at: 0, value: "a", ok: true, limit: 2, remaining: 0},
		{at: 0, value: "a", limit: 2, remaining: 0, retry: 500 * ms},
		{at: 0, value: "b", ok: true, limit: 2, remaining: 2}, // every value its own bucket
		{at: 200 * ms, value: "a", limit: 2, remaining: 0, retry: 300 * ms},
		{at: 500 * ms, value: "a", ok: true, limit: 2, remaining: 0}, // one token refilled
		{at: 3 * s, value: "a", ok: true, limit: 2, remaining: 2},    // full again, not more
		{at: 3 * s, value: "a", n: 2, ok: true, limit: 2, remaining: 0},
		{at: 3 * s, value: "a", n: 2, limit: 2, remaining: 0, retry: s},
		{at: 10 * s, value: "a", n: 4, limit: 2, remaining: 3, retry: s}, // more than the bucket holds: never fits
		{at: 10 * s, value: "a", n: 3, ok: true, limit: 2, remaining: 0},
		{at: 0, value: "vip", n: 5, ok: true, limit: 5, remaining: 1},
		{at: 0, value: "vip", ok: true, limit: 5, remaining: 0},
		{at: 0, value: "vip", limit: 5, remaining: 0, retry: 200 * ms},
		{at: 0, value: "abuser", limit: 0, retry: s},
		{at: 5 * s, value: "abuser", limit: 0, retry: s},
	})
	assert.Equal(t, 3, l.Len(), "a, b and vip; a blocked value takes no record")
	ok, _, _ := lookup(l, "abuser")
	assert.False(t, ok)
}

func TestLeakyBucket(t *testing.T) {
	// One request per 500ms per value; a request may wait up to 1s for its
	// turn. vip is paced at one per 100ms.
	l := mustNew(t, Config{Algorithm: LeakyBucket, Limit: 2, Window: s, MaxWait: s, Overrides: map[string]int64{"vip": 10, "abuser": 0}}, nil)
	play(t, l, []step{
		{at: 0, value: "a", ok: true, limit: 2, remaining: 2},
		{at: 0, value: "a", ok: true, limit: 2, remaining: 1, wait: 500 * ms},
		{at: 0, value: "a", ok: true, limit: 2, remaining: 0, wait: s},
		{at: 0, value: "a", limit: 2, remaining: 0, retry: 500 * ms}, // its turn would be 1.5s away
		{at: 0, value: "b", ok: true, limit: 2, remaining: 2},
		{at: 100 * ms, value: "a", limit: 2, remaining: 0, retry: 400 * ms},
		{at: 500 * ms, value: "a", ok: true, limit: 2, remaining: 0, wait: s},
		{at: 5 * s, value: "a", n: 2, ok: true, limit: 2, remaining: 1}, // two slots, starting now
		{at: 5 * s, value: "a", ok: true, limit: 2, remaining: 0, wait: s},
		{at: 0, value: "vip", ok: true, limit: 10, remaining: 10},
		{at: 0, value: "vip", ok: true, limit: 10, remaining: 9, wait: 100 * ms},
		{at: 50 * ms, value: "vip", ok: true, limit: 10, remaining: 8, wait: 150 * ms},
		{at: 0, value: "abuser", limit: 0, retry: s},
	})
}

// TestLeakyBucketNanoseconds: pacing above 1000 per second keeps its rate,
// which integer milliseconds cannot.
func TestLeakyBucketNanoseconds(t *testing.T) {
	l := mustNew(t, Config{Algorithm: LeakyBucket, Limit: 4000, Window: s}, nil)
	play(t, l, []step{
		{at: 0, value: "a", ok: true, limit: 4000, remaining: 0},
		{at: 249_999, value: "a", limit: 4000, retry: 1},
		{at: 250_000, value: "a", ok: true, limit: 4000},
		{at: 250_001, value: "a", limit: 4000, retry: 249_999},
	})
}

func TestConcurrency(t *testing.T) {
	l := mustNew(t, Config{Algorithm: Concurrency, Limit: 2, Overrides: map[string]int64{"vip": 3, "abuser": 0}}, nil)
	ds := play(t, l, []step{
		{value: "a", ok: true, limit: 2, remaining: 1},
		{value: "a", ok: true, limit: 2, remaining: 0},
		{value: "a", limit: 2, remaining: 0}, // no retry-after: a slot frees when a request ends
		{value: "b", n: 2, ok: true, limit: 2, remaining: 0},
		{value: "c", n: 3, limit: 2, remaining: 2},
		{value: "vip", n: 3, ok: true, limit: 3, remaining: 0},
		{value: "abuser", limit: 0},
	})
	l.Release(ds[0].Hold(), 1)
	l.Release(ds[2].Hold(), 1) // rejected: nothing to release
	play(t, l, []step{
		{value: "a", ok: true, limit: 2, remaining: 0},
		{value: "a", limit: 2, remaining: 0},
	})
	l.Release(ds[3].Hold(), 2)
	_, inFlight, _ := lookup(l, "b")
	assert.Zero(t, inFlight)
	l.Undo(ds[5], 3) // another rule rejected vip's request
	play(t, l, []step{{value: "vip", n: 3, ok: true, limit: 3, remaining: 0}})
	checkTable(t, l)
}

// TestUndo: an admitted reservation given back is available again; a
// rejected one gives nothing back.
func TestUndo(t *testing.T) {
	t.Run("token-bucket", func(t *testing.T) {
		l := mustNew(t, Config{Limit: 2, Window: s}, nil)
		ds := play(t, l, []step{
			{value: "a", ok: true, limit: 2, remaining: 1},
			{value: "a", ok: true, limit: 2, remaining: 0},
			{value: "a", limit: 2, remaining: 0, retry: 500 * ms},
		})
		l.Undo(ds[2], 1)
		l.Undo(ds[1], 1)
		play(t, l, []step{
			{value: "a", ok: true, limit: 2, remaining: 0},
			{value: "a", limit: 2, remaining: 0, retry: 500 * ms},
		})
	})
	t.Run("leaky-bucket", func(t *testing.T) {
		l := mustNew(t, Config{Algorithm: LeakyBucket, Limit: 2, Window: s, MaxWait: s}, nil)
		ds := play(t, l, []step{
			{value: "a", ok: true, limit: 2, remaining: 2},
			{value: "a", ok: true, limit: 2, remaining: 1, wait: 500 * ms},
		})
		l.Undo(ds[1], 1) // the last slot given: the next request takes it again
		play(t, l, []step{{value: "a", ok: true, limit: 2, remaining: 1, wait: 500 * ms}})
	})
}

// TestStaleHandles: a Decision whose record was evicted and reused for
// another value never acts on that value; a bucket's Undo gives back to
// its own value's debt, or to its new record once it is tracked again.
func TestStaleHandles(t *testing.T) {
	t.Run("token-bucket", func(t *testing.T) {
		l := mustNew(t, Config{Limit: 1, Window: s, MaxKeys: 1}, nil)
		old := l.Acquire(0, "a", 1)
		require.True(t, old.OK)
		require.True(t, l.Acquire(0, "b", 1).OK) // evicts a; b takes its record
		require.False(t, l.Acquire(0, "b", 1).OK)
		l.Undo(old, 1)
		assert.False(t, l.Acquire(0, "b", 1).OK, "a's Undo gave b a token")
		assert.True(t, l.Acquire(0, "a", 1).OK, "a's Undo gave its token back to its debt")
		assert.False(t, l.Acquire(0, "a", 1).OK)
		checkTable(t, l)
	})
	t.Run("token-bucket tracked again", func(t *testing.T) {
		l := mustNew(t, Config{Limit: 2, Window: s, MaxKeys: 1}, nil)
		old := l.Acquire(0, "a", 1)
		require.True(t, old.OK)
		require.True(t, l.Acquire(0, "b", 1).OK)  // evicts a with its debt
		require.True(t, l.Acquire(0, "a", 1).OK)  // evicts b; a resumes from its debt
		require.False(t, l.Acquire(0, "a", 1).OK) // both tokens spent
		l.Undo(old, 1)                            // to a's new record
		assert.True(t, l.Acquire(0, "a", 1).OK, "a's Undo gave its token back to its new life")
		assert.True(t, l.Acquire(0, "b", 1).OK, "b's one token left, from its debt")
		assert.False(t, l.Acquire(0, "b", 1).OK, "none of a's given to b")
	})
	t.Run("concurrency", func(t *testing.T) {
		l := mustNew(t, Config{Algorithm: Concurrency, Limit: 1, MaxKeys: 1}, nil)
		a := l.Acquire(0, "a", 1)
		require.True(t, a.OK)
		l.Release(a.Hold(), 1)
		b := l.Acquire(0, "b", 1) // evicts a, which has none in flight
		require.True(t, b.OK)
		l.Release(a.Hold(), 1) // a second Release of a: its record is b's now
		assert.False(t, l.Acquire(0, "b", 1).OK, "a's Release freed b's slot")
		checkTable(t, l)
	})
}

// TestPinned: a value with requests in flight is never evicted, and a value
// that finds no evictable record is rejected until one is released.
func TestPinned(t *testing.T) {
	l := mustNew(t, Config{Algorithm: Concurrency, Limit: 1, MaxKeys: 300}, nil)
	held := l.Acquire(0, "held", 1)
	require.True(t, held.OK)
	for i := range 100_000 {
		d := l.Acquire(0, "k"+strconv.Itoa(i), 1)
		require.True(t, d.OK)
		if i%1000 == 999 {
			defer l.Release(d.Hold(), 1) // one in a thousand stays in flight to the end
		} else {
			l.Release(d.Hold(), 1)
		}
		if i%10_000 == 0 {
			checkTable(t, l)
		}
	}
	checkTable(t, l)
	ok, inFlight, _ := lookup(l, "held")
	require.True(t, ok, "a value in flight was evicted")
	assert.EqualValues(t, 1, inFlight)
	assert.False(t, l.Acquire(0, "held", 1).OK)
	l.Release(held.Hold(), 1)
	assert.True(t, l.Acquire(0, "held", 1).OK)

	full := mustNew(t, Config{Algorithm: Concurrency, Limit: 5, MaxKeys: 1}, nil)
	a := full.Acquire(0, "a", 1)
	require.True(t, a.OK)
	d := full.Acquire(0, "b", 1)
	assert.Equal(t, Decision{Decision: flow.Decision{Limit: 5}}, d, "rejected, with no record")
	full.Release(a.Hold(), 1)
	assert.True(t, full.Acquire(0, "b", 1).OK)
}

// TestLongValues: values of any length are told apart and take the same
// record; the table keeps no reference to them.
func TestLongValues(t *testing.T) {
	l := mustNew(t, Config{Limit: 1, Window: s}, nil)
	long := strings.Repeat("x", 1<<16)
	require.True(t, l.Acquire(0, long+"1", 1).OK)
	require.True(t, l.Acquire(0, long+"2", 1).OK)
	assert.False(t, l.Acquire(0, long+"1", 1).OK)
	assert.False(t, l.Acquire(0, strings.Clone(long+"2"), 1).OK, "the same value in another string")
	assert.Equal(t, 2, l.Len())
	assert.True(t, pointerFree(reflect.TypeFor[record]()), "a record must hold no pointer: it keeps no value alive")
}

// pointerFree reports whether values of type t hold no pointer.
func pointerFree(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Array:
		return pointerFree(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			if f := t.Field(i); !pointerFree(f.Type) {
				return false
			}
		}
		return true
	case reflect.Pointer, reflect.UnsafePointer, reflect.Slice, reflect.Map, reflect.String,
		reflect.Interface, reflect.Func, reflect.Chan:
		return false
	default:
		return true
	}
}

// TestReload: a Limiter made with its predecessor keeps the values'
// state when the table's shape is unchanged, and starts empty otherwise.
func TestReload(t *testing.T) {
	cfg := Config{Limit: 2, Window: s}
	l1 := mustNew(t, cfg, nil)
	play(t, l1, []step{
		{value: "a", ok: true, limit: 2, remaining: 1},
		{value: "a", ok: true, limit: 2, remaining: 0},
	})
	cfg.Limit = 4 // twice the rate: the empty bucket refills in half the time
	l2 := mustNew(t, cfg, l1)
	play(t, l2, []step{
		{value: "a", limit: 4, remaining: 0, retry: 250 * ms},
		{at: 250 * ms, value: "a", ok: true, limit: 4, remaining: 0},
	})
	cfg.MaxKeys = 10 // another shape: a fresh table
	l3 := mustNew(t, cfg, l2)
	play(t, l3, []step{{at: 250 * ms, value: "a", ok: true, limit: 4, remaining: 3}})

	c := Config{Algorithm: Concurrency, Limit: 1}
	c1 := mustNew(t, c, nil)
	d := c1.Acquire(0, "a", 1)
	require.True(t, d.OK)
	c2 := mustNew(t, c, c1)
	assert.False(t, c2.Acquire(0, "a", 1).OK, "in flight before the reload")
	c2.Release(d.Hold(), 1) // the old rule's decision, released through the new
	assert.True(t, c2.Acquire(0, "a", 1).OK)

	t2 := mustNew(t, Config{Algorithm: LeakyBucket, Limit: 2}, c2) // another algorithm
	assert.Zero(t, t2.Len())
}

// TestNegativeTime: a fresh bucket is full whatever the clock's origin.
func TestNegativeTime(t *testing.T) {
	l := mustNew(t, Config{Limit: 2, Window: s}, nil)
	play(t, l, []step{
		{at: -10 * s, value: "a", ok: true, limit: 2, remaining: 1},
		{at: -10 * s, value: "a", ok: true, limit: 2, remaining: 0},
		{at: -10 * s, value: "a", limit: 2, remaining: 0, retry: 500 * ms},
	})
}

// TestAcquireToOverwrites: AcquireTo sets every field of the Decision it is
// given, whatever it held, to what Acquire returns, on every path: admitted,
// rejected, blocked by an override of 0, and with every record pinned.
func TestAcquireToOverwrites(t *testing.T) {
	stale := Decision{Decision: flow.Decision{OK: true, Wait: 9, Limit: 9, Remaining: 9, RetryAfter: 9}, shard: 9, rec: 9, gen: 9}
	for _, cfg := range []Config{
		{Limit: 1, Overrides: map[string]int64{"blocked": 0}},
		{Algorithm: LeakyBucket, Limit: 1, MaxWait: s},
		{Algorithm: LeakyBucket, Limit: 3, Window: 4, MaxKeys: 1}, // rejections
		{Algorithm: Concurrency, Limit: 1, MaxKeys: 1},
	} {
		a, b := mustNew(t, cfg, nil), mustNew(t, cfg, nil)
		stale.lim = b
		for i, v := range []string{"u", "u", "u", "blocked", "v"} {
			want := a.Acquire(int64(i), v, 1)
			got := stale
			b.AcquireTo(&got, int64(i), v, 1, true)
			if want.lim != nil { // a handle on a record: of each Limiter's own table
				require.Same(t, b, got.lim)
				k := b.tab.idOf(v)
				si, sh := b.tab.shard(k)
				require.Equal(t, si, got.shard)
				require.Equal(t, k, sh.recs[got.rec].id)
				if cfg.Algorithm != Concurrency {
					require.Equal(t, k, got.k)
				}
				want.lim, want.shard, want.rec, got.lim, got.shard, got.rec = nil, 0, 0, nil, 0, 0
				want.k, got.k = 0, 0
			}
			require.Equal(t, want, got, "%s step %d (%s)", cfg.Algorithm, i, v)
		}
	}
}

// TestFrontKeepsEachValuesState: values decided twice in a row take turns
// as a shard's front (see shard); each keeps its own bucket through the
// turns, and the front's state is the one an Undo gives back to and an
// eviction leaves as the value's debt.
func TestFrontKeepsEachValuesState(t *testing.T) {
	admitted := func(l *Limiter, at time.Duration, v string, times int) (n int) {
		for range times {
			if l.Acquire(int64(at), v, 1).OK {
				n++
			}
		}
		return n
	}
	t.Run("turns", func(t *testing.T) {
		l := mustNew(t, Config{Limit: 3, Window: s, MaxKeys: 2}, nil) // one shard
		require.Len(t, l.tab.shards, 1)
		sh := &l.tab.shards[0]
		assert.Equal(t, 2, admitted(l, 0, "a", 2))
		assert.Equal(t, sh.frontRec, recOf(t, l, "a"), "a decided twice in a row: the front")
		assert.Equal(t, 2, admitted(l, 0, "b", 2))
		assert.Equal(t, sh.frontRec, recOf(t, l, "b"), "then b")
		assert.Equal(t, 1, admitted(l, 0, "a", 3), "a kept its bucket: one token of three left")
		assert.Equal(t, 1, admitted(l, 0, "b", 3), "so did b")
		assert.Equal(t, sh.frontRec, recOf(t, l, "b"))
		d := l.Acquire(int64(s), "b", 1) // a full window later: refilled
		require.True(t, d.OK)
		l.Undo(d, 1)
		assert.Equal(t, 3, admitted(l, s, "b", 4), "the Undo gave the token back to the front")
		checkTable(t, l)
	})
	t.Run("eviction", func(t *testing.T) {
		l := mustNew(t, Config{Limit: 3, Window: s, MaxKeys: 1}, nil)
		sh := &l.tab.shards[0]
		assert.Equal(t, 3, admitted(l, 0, "b", 4))
		require.Equal(t, sh.frontRec, recOf(t, l, "b"))
		admitted(l, 0, "c", 1) // takes b's record
		ok, _, _ := lookup(l, "b")
		require.False(t, ok, "b evicted")
		assert.Equal(t, int32(-1), sh.frontRec, "no front once its record went to another value")
		assert.Zero(t, admitted(l, 0, "b", 4), "b back with its spent bucket")
		assert.Equal(t, 3, admitted(l, s, "b", 4), "and refilled a window later")
		checkTable(t, l)
	})
}

// recOf returns the record of value, which must be tracked.
func recOf(t *testing.T, l *Limiter, value string) int32 {
	t.Helper()
	k := l.tab.idOf(value)
	_, s := l.tab.shard(k)
	s.mu.Lock()
	defer s.mu.Unlock()
	i := s.find(k)
	require.GreaterOrEqual(t, i, int32(0), "%s not tracked", value)
	return i
}

// TestLeakyWaiterEvictedGivesItsSlotBack: a leaky bucket's waiter whose
// value is evicted while it waits, and which then gives up, gives its slot
// back: to its value's debt when the value is not tracked (the slot was the
// last one taken: the debt moves back), or to its value's new record when
// it is tracked again (the slot becomes a gap). The value's next request
// waits for the live slots only. Before, the Undo of an evicted record was
// ignored, and the slot stayed in the debt: the next request waited one
// slot more than any live request required.
func TestLeakyWaiterEvictedGivesItsSlotBack(t *testing.T) {
	cfg := Config{Algorithm: LeakyBucket, Limit: 10, Window: s, MaxWait: time.Minute, MaxKeys: 1}
	t.Run("in its debt", func(t *testing.T) {
		l := mustNew(t, cfg, nil)
		ds := play(t, l, []step{
			{value: "a", ok: true, limit: 10, remaining: 600},
			{value: "a", ok: true, limit: 10, remaining: 599, wait: 100 * ms}, // waits for its slot
			{at: ms, value: "b", ok: true, limit: 10, remaining: 600},         // evicts a: its debt is 200ms
		})
		l.Undo(ds[1], 1) // a's waiter gives up
		play(t, l, []step{{at: 2 * ms, value: "a", ok: true, limit: 10, remaining: 599, wait: 98 * ms}})
		checkTable(t, l)
	})
	t.Run("tracked again", func(t *testing.T) {
		l := mustNew(t, cfg, nil)
		ds := play(t, l, []step{
			{value: "a", ok: true, limit: 10, remaining: 600},
			{value: "a", ok: true, limit: 10, remaining: 599, wait: 100 * ms},
			{at: ms, value: "b", ok: true, limit: 10, remaining: 600},
			{at: 2 * ms, value: "a", ok: true, limit: 10, remaining: 598, wait: 198 * ms}, // resumes from the debt
		})
		l.Undo(ds[1], 1) // the slot at 100ms, before the new record's TAT: a gap
		play(t, l, []step{
			{at: 3 * ms, value: "a", ok: true, limit: 10, remaining: 598, wait: 97 * ms},
			{at: 3 * ms, value: "a", ok: true, limit: 10, remaining: 597, wait: 297 * ms},
		})
		checkTable(t, l)
	})
}
