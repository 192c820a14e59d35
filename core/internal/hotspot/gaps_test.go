package hotspot

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core/internal/flow"
)

// slotsModel is the schedule of one value's leaky bucket, in units of 1/lim
// ns, so that every cost is whole: the slots its live requests hold. A new
// request at now is owed the earliest start s >= now with its slot free of
// live slots; it is admitted when s is within MaxWait of now.
type slotsModel struct {
	lim, window, maxWait int64
	live                 map[int64]int64 // start -> end
	reused               int             // requests admitted before the end of the last live slot
}

func newSlotsModel(cfg Config, lim int64) *slotsModel {
	return &slotsModel{lim: lim, window: int64(cfg.Window), maxWait: int64(cfg.MaxWait), live: map[int64]int64{}}
}

func (m *slotsModel) free(s, e int64) bool {
	for st, en := range m.live {
		if st < e && s < en {
			return false
		}
	}
	return true
}

// acquire returns the decision of n at now and the start of the slot it
// takes, if admitted.
func (m *slotsModel) acquire(now, n int64) (flow.Decision, int64) {
	u := now * m.lim
	cost := n * m.window
	starts := []int64{u}
	tat := u
	for _, en := range m.live {
		tat = max(tat, en)
		if en > u {
			starts = append(starts, en)
		}
	}
	slices.Sort(starts)
	s := starts[len(starts)-1]
	for _, c := range starts {
		if m.free(c, c+cost) {
			s = c
			break
		}
	}
	ceilDiv := func(x int64) int64 { return (x + m.lim - 1) / m.lim }
	if over := s - u - m.maxWait*m.lim; over > 0 {
		return flow.Decision{Limit: m.lim, Remaining: m.remaining(u, tat), RetryAfter: time.Duration(ceilDiv(over))}, 0
	}
	if s < tat {
		m.reused++
	}
	m.live[s] = s + cost
	return flow.Decision{OK: true, Wait: time.Duration(ceilDiv(s) - now), Limit: m.lim, Remaining: m.remaining(u, max(tat, s+cost))}, s
}

func (m *slotsModel) remaining(u, tat int64) int64 {
	left := m.maxWait*m.lim + m.window - max(tat-u, 0)
	if left <= 0 {
		return 0
	}
	return left / m.window
}

// TestLeakyCancelledTurnsReused: after any pattern of cancellations, a new
// request of a value waits exactly as long as the live requests of that
// value ahead of it require (the earliest slot free of them), on tables of
// fake times, several values sharing one shard's gaps. Before, a slot given
// back was reused only when it was the last one taken: after 24 of 40
// waiters left, the next waited for all 40.
func TestLeakyCancelledTurnsReused(t *testing.T) {
	const c = 100 * ms
	t.Run("24 of 40 leave", func(t *testing.T) {
		l := mustNew(t, Config{Algorithm: LeakyBucket, Limit: 10, Window: s, MaxWait: 10 * s}, nil)
		var ds []Decision
		for range 40 {
			d := l.Acquire(0, "u", 1)
			require.True(t, d.OK)
			ds = append(ds, d)
			require.True(t, l.Acquire(0, "other", 1).OK) // another value's queue beside it
		}
		// Three of every four of the first 32 leave, then the last 8
		// stay.
		for i := 0; i < 32; i += 4 {
			l.Undo(ds[i], 1)
			l.Undo(ds[i+1], 1)
			l.Undo(ds[i+3], 1)
		}
		// Left: slots 2, 6, ..., 30 and 32..39. New requests take the free
		// slots in order, then those after the last.
		for _, slot := range []time.Duration{0, 1, 3, 4, 5, 7} {
			assert.Equal(t, slot*c, l.Acquire(0, "u", 1).Wait)
		}
		for range 24 - 6 - 1 {
			l.Acquire(0, "u", 1)
		}
		assert.Equal(t, 31*c, l.Acquire(0, "u", 1).Wait, "the 24th takes the last slot given back")
		assert.Equal(t, 40*c, l.Acquire(0, "u", 1).Wait)
		assert.Equal(t, 40*c, l.Acquire(0, "other", 1).Wait, "other's queue is its own")
	})
	for _, cfg := range []Config{
		{Algorithm: LeakyBucket, Limit: 10, Window: s, MaxWait: 100 * s, MaxKeys: 8},
		{Algorithm: LeakyBucket, Limit: 3, Window: s, MaxWait: 20 * s, MaxKeys: 8, Overrides: map[string]int64{"v1": 7}},
	} {
		t.Run(fmt.Sprintf("random patterns %d per %s", cfg.Limit, cfg.Window), func(t *testing.T) {
			values := []string{"v0", "v1", "v2"}
			reused := 0
			for seed := range uint64(150) {
				rng := rand.New(rand.NewPCG(seed, 7))
				l := mustNew(t, cfg, nil)
				require.Len(t, l.tab.shards, 1, "the values share one shard's gaps")
				models := map[string]*slotsModel{}
				type waiter struct {
					d Decision
					n int64
				}
				held := map[string]map[int64]waiter{} // by slot start, in units
				for _, v := range values {
					lim := cfg.Limit
					if o, ok := cfg.Overrides[v]; ok {
						lim = o
					}
					models[v] = newSlotsModel(cfg, lim)
					held[v] = map[int64]waiter{}
				}
				now := int64(0)
				var log strings.Builder
				for i := range 400 {
					v := values[rng.IntN(len(values))]
					m := models[v]
					switch r := rng.IntN(10); {
					case r < 5: // a new request
						n := 1 + int64(rng.IntN(4)/3)
						d := l.Acquire(now, v, n)
						want, start := m.acquire(now, n)
						fmt.Fprintf(&log, "%d: %s acquires %d at %d: %+v (want %+v)\n", i, v, n, now, outcome(d), want)
						require.Equal(t, want, outcome(d), "seed %d\n%s", seed, log.String())
						if d.OK {
							held[v][start] = waiter{d, n}
						}
					case r < 8: // a waiter gives up
						var starts []int64
						for st := range held[v] {
							if st > now*m.lim { // still waiting
								starts = append(starts, st)
							}
						}
						if len(starts) == 0 {
							continue
						}
						slices.Sort(starts)
						st := starts[rng.IntN(len(starts))]
						fmt.Fprintf(&log, "%d: %s gives up slot %d/%d\n", i, v, st, m.lim)
						l.Undo(held[v][st].d, held[v][st].n)
						delete(held[v], st)
						delete(m.live, st)
					default: // time passes, not on slot boundaries
						now += rng.Int64N(int64(c) * 3 / 2)
					}
				}
				for _, m := range models {
					reused += m.reused
				}
			}
			assert.Greater(t, reused, 1000, "slots given back were taken again")
		})
	}
}

// TestLeakyGapsBounded: a shard remembers at most maxGaps gaps, whatever
// its values; a slot given back beyond them is left empty, which only
// makes later requests wait longer, never admits one early.
func TestLeakyGapsBounded(t *testing.T) {
	const c = time.Microsecond
	l := mustNew(t, Config{Algorithm: LeakyBucket, Limit: int64(s / c), Window: s, MaxWait: s, MaxKeys: 8}, nil)
	require.Len(t, l.tab.shards, 1)
	sh := &l.tab.shards[0]
	var ds []Decision
	for range 3 * maxGaps {
		ds = append(ds, l.Acquire(0, "u", 1))
	}
	w1 := l.Acquire(0, "w", 1)
	require.True(t, l.Acquire(0, "w", 1).OK)
	for i := 0; i < len(ds)-1; i += 2 { // none adjacent: a gap each
		l.Undo(ds[i], 1)
	}
	assert.Len(t, sh.gaps.List, maxGaps)
	assert.EqualValues(t, maxGaps, sh.recs[recOf(t, l, "u")].gaps)
	l.Undo(w1, 1) // another value of the shard: forgotten too
	assert.Equal(t, c, l.Acquire(0, "w", 1).Wait-c, "w waits after its last slot")
	for i := range maxGaps {
		assert.Equal(t, time.Duration(2*i)*c, l.Acquire(0, "u", 1).Wait, "the remembered gaps, in order")
	}
	assert.Empty(t, sh.gaps.List)
	assert.Equal(t, time.Duration(3*maxGaps)*c, l.Acquire(0, "u", 1).Wait, "the forgotten ones are waited for")
	checkTable(t, l)
}

// TestLeakyGapsOfEvictedValue: a value evicted with gaps leaves its TAT as
// its debt (its gaps are forgotten: it waits for them), and the gaps of the
// record's new value are its own.
func TestLeakyGapsOfEvictedValue(t *testing.T) {
	l := mustNew(t, Config{Algorithm: LeakyBucket, Limit: 10, Window: s, MaxWait: 10 * s, MaxKeys: 1}, nil)
	var ds []Decision
	for range 4 {
		ds = append(ds, l.Acquire(0, "a", 1))
	}
	l.Undo(ds[1], 1)
	sh := &l.tab.shards[0]
	require.Len(t, sh.gaps.List, 1)
	b := l.Acquire(0, "b", 1) // evicts a
	assert.Empty(t, sh.gaps.List)
	assert.Zero(t, sh.recs[0].gaps)
	l.Undo(ds[2], 1) // a's old record: another life, ignored
	assert.Empty(t, sh.gaps.List)
	require.True(t, l.Acquire(0, "b", 1).OK)
	l.Undo(b, 1)
	assert.Len(t, sh.gaps.List, 1, "b's own gap")
	assert.Equal(t, 400*ms, l.Acquire(0, "a", 1).Wait, "a, back, owes its TAT")
}

// TestLeakyGapsAcrossReload: gaps survive a reload; one that changes the
// limits shrinks them to whole nanoseconds (they were in units of the old
// limit), and a slot the old Limiter gives back after it is given back in
// whole nanoseconds within it.
func TestLeakyGapsAcrossReload(t *testing.T) {
	cfg := Config{Algorithm: LeakyBucket, Limit: 3, Window: s, MaxWait: 10 * s}
	l1 := mustNew(t, cfg, nil)
	var ds []Decision
	for range 5 {
		ds = append(ds, l1.Acquire(0, "a", 1))
	}
	l1.Undo(ds[1], 1) // [333333333⅓, 666666666⅔)
	l2 := mustNew(t, cfg, l1)
	d := l2.Acquire(0, "a", 1)
	assert.Equal(t, time.Duration(333333334), d.Wait, "the gap, as it was")
	l2.Undo(d, 1)
	cfg.Limit = 6 // slots of 166666666⅔ns
	l3 := mustNew(t, cfg, l2)
	l1.Undo(ds[3], 1) // stale: [1s, 1333333333⅓) gives back [1s, 1333333333)
	assert.Equal(t, time.Duration(333333334), l3.Acquire(0, "a", 1).Wait, "the gap, shrunk to [333333334, 666666666)")
	assert.Equal(t, s, l3.Acquire(0, "a", 1).Wait, "the old Limiter's")
	// What is left of each, [500000000⅔, 666666666) and [1166666666⅔,
	// 1333333333), is a little short of a slot: the next requests queue
	// after the TAT, 1666666666⅔ rounded up at the reload.
	assert.Equal(t, time.Duration(1666666667), l3.Acquire(0, "a", 1).Wait)
	assert.Equal(t, time.Duration(1833333334), l3.Acquire(0, "a", 1).Wait)
}

// TestTokenUndoExact: tokens given back are exactly the cost taken, with
// its fraction.
func TestTokenUndoExact(t *testing.T) {
	l := mustNew(t, Config{Limit: 3, Window: s}, nil)
	ds := play(t, l, []step{
		{value: "a", ok: true, limit: 3, remaining: 2},
		{value: "a", n: 2, ok: true, limit: 3, remaining: 0},
	})
	l.Undo(ds[1], 2)
	play(t, l, []step{
		{value: "a", ok: true, limit: 3, remaining: 1}, // TAT 666666666⅔
		{value: "a", ok: true, limit: 3, remaining: 0},
		{value: "a", limit: 3, retry: 333333334},
		{at: 333333333, value: "a", limit: 3, retry: 1},
		{at: 333333334, value: "a", ok: true, limit: 3},
	})
}
