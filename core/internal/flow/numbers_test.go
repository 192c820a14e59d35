package flow

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core/internal/bucketmodel"
	"github.com/sluicekit/sluice/core/internal/window"
	"github.com/sluicekit/sluice/core/ratemath"
)

// TestBucketsExactAtEveryRate: token and leaky buckets follow the exact
// rational definition at rates whose cost is not a whole number of
// nanoseconds, up to one request per nanosecond, and at the largest burst
// and wait allowed. Before costs were kept exactly, 6e8/s admitted 1.67x
// its limit (a cost of 1.67ns rounded to 1).
func TestBucketsExactAtEveryRate(t *testing.T) {
	day := 24 * time.Hour
	cfgs := []Config{
		{Algorithm: TokenBucket, Limit: 6e8, Window: s},
		{Algorithm: LeakyBucket, Limit: 6e8, Window: s, MaxWait: us},
		{Algorithm: TokenBucket, Limit: 3, Window: s},
		{Algorithm: TokenBucket, Limit: 3, Window: s, Burst: 2},
		{Algorithm: LeakyBucket, Limit: 3000, Window: s, MaxWait: ms},
		{Algorithm: TokenBucket, Limit: int64(s), Window: s},        // one per nanosecond
		{Algorithm: TokenBucket, Limit: int64(s) - 1, Window: s},    // cost 1ns plus a billionth
		{Algorithm: LeakyBucket, Limit: int64(s) - 1, Window: s},    // maxWait 0
		{Algorithm: TokenBucket, Limit: 7, Window: day, Burst: 300}, // 7 per day
		{Algorithm: TokenBucket, Limit: 2, Window: day, Burst: ratemath.MulDiv(int64(MaxSpan-day), 2, int64(day))},
		{Algorithm: LeakyBucket, Limit: 7, Window: day, MaxWait: MaxSpan},
	}
	for _, cfg := range cfgs {
		name := fmt.Sprintf("%s %d per %s burst %d maxWait %s", cfg.Algorithm, cfg.Limit, cfg.Window, cfg.Burst, cfg.MaxWait)
		t.Run(name, func(t *testing.T) {
			l := mustNew(t, cfg, nil)
			c := cfg.WithDefaults()
			m := &bucketmodel.Bucket{Limit: c.Limit, Window: c.Window, Burst: c.Burst, MaxWait: c.MaxWait, Leaky: c.Algorithm == LeakyBucket}
			rng := rand.New(rand.NewPCG(1, uint64(cfg.Limit)))
			cost := float64(cfg.Window) / float64(cfg.Limit)
			now := int64(1 << 40)
			admitted := 0
			for i := range 5000 {
				// Steps around the cost: the bucket stays near full and
				// near empty, where rounding would show.
				now += int64(rng.Float64() * 2 * cost)
				n := int64(1)
				if i%7 == 0 {
					n = 1 + rng.Int64N(3)
				}
				d := l.Acquire(now, n)
				ok, wait, retry := m.Acquire(now, n)
				require.Equal(t, [3]any{ok, wait, retry}, [3]any{d.OK, d.Wait, d.RetryAfter},
					"step %d: Acquire(%d, %d)", i, now, n)
				if ok {
					admitted++
				}
			}
			assert.Positive(t, admitted)
		})
	}
}

// TestHighRateAdmitsTheLimit: at 6e8 per second (600 per µs), requests
// every nanosecond for 10µs after the bucket or queue is spent get 6000
// slots, not 1.67x as many.
func TestHighRateAdmitsTheLimit(t *testing.T) {
	for _, cfg := range []Config{
		{Algorithm: TokenBucket, Limit: 600, Window: us},
		{Algorithm: LeakyBucket, Limit: 600, Window: us, MaxWait: us},
	} {
		l := mustNew(t, cfg, nil)
		// Spend the bucket first: a token bucket starts full.
		for l.Acquire(0, 1).OK {
		}
		admitted := 0
		for now := int64(1); now <= 10_000; now++ {
			if l.Acquire(now, 1).OK {
				admitted++
			}
		}
		assert.Equal(t, 6000, admitted, "%s", cfg.Algorithm)
	}
}

// TestBoundsRefused: values the arithmetic cannot honour are refused, each
// with its field and the largest value allowed.
func TestBoundsRefused(t *testing.T) {
	day := 24 * time.Hour
	maxBurst := ratemath.MulDiv(int64(MaxSpan-day), 2, int64(day))
	tests := []struct {
		cfg   Config
		field string
		most  string // the largest value allowed, as the message writes it
	}{
		{Config{Algorithm: TokenBucket, Limit: 2, Window: day, Burst: 1_000_000}, "burst", fmt.Sprint(maxBurst)},
		{Config{Algorithm: TokenBucket, Limit: 2, Window: day, Burst: maxBurst + 1}, "burst", fmt.Sprint(maxBurst)},
		{Config{Algorithm: TokenBucket, Limit: int64(s), Window: s, Burst: math.MaxInt64 - int64(s)}, "burst", fmt.Sprint(MaxLimit - int64(s))},
		{Config{Algorithm: TokenBucket, Limit: math.MaxInt64, Window: math.MaxInt64}, "limit", fmt.Sprint(MaxLimit)},
		{Config{Algorithm: LeakyBucket, Limit: 1, Window: s, MaxWait: math.MaxInt64}, "maxWait", fmt.Sprint(int64(MaxSpan))},
		{Config{Algorithm: LeakyBucket, Limit: 1, Window: s, MaxWait: MaxSpan + 1}, "maxWait", fmt.Sprint(int64(MaxSpan))},
		{Config{Algorithm: FixedWindow, Limit: math.MaxInt64}, "limit", fmt.Sprint(MaxLimit)},
		{Config{Algorithm: LeapArray, Limit: MaxLimit + 1}, "limit", fmt.Sprint(MaxLimit)},
	}
	for _, alg := range Algorithms() {
		tests = append(tests, struct {
			cfg   Config
			field string
			most  string
		}{Config{Algorithm: alg, Limit: 1, Window: math.MaxInt64, Buckets: map[bool]int{true: 1}[alg == LeapArray]}, "window", fmt.Sprint(int64(MaxSpan))})
	}
	for _, tt := range tests {
		errs := tt.cfg.Validate()
		var fields []string
		for _, e := range errs {
			fields = append(fields, e.Field)
			if e.Field == tt.field {
				assert.Contains(t, e.Msg, tt.most, "%+v: %s", tt.cfg, e)
			}
		}
		assert.Contains(t, fields, tt.field, "%+v", tt.cfg)
	}
	// The largest values are accepted.
	for _, cfg := range []Config{
		{Algorithm: TokenBucket, Limit: 2, Window: day, Burst: maxBurst},
		{Algorithm: TokenBucket, Limit: int64(s), Window: s, Burst: MaxLimit - int64(s)},
		{Algorithm: LeakyBucket, Limit: 1, Window: MaxSpan, MaxWait: MaxSpan},
		{Algorithm: SlidingCounter, Limit: MaxLimit, Window: MaxSpan},
	} {
		assert.Empty(t, cfg.Validate(), "%+v", cfg)
	}
}

// TestEdgesOfEveryAlgorithm: with the longest window, the largest limit, a
// clock far from zero and requests of any n, every algorithm admits exactly
// its limit in a window, refuses a request that can never fit without
// disturbing its count, and admits again once the window has passed.
func TestEdgesOfEveryAlgorithm(t *testing.T) {
	const t0 = int64(1) << 61 // a clock far from zero
	w := int64(MaxSpan)
	for _, tt := range []struct {
		cfg  Config
		fill []int64 // n of requests that fill the limit
	}{
		{Config{Algorithm: LeapArray, Limit: MaxLimit, Window: MaxSpan, Buckets: 1}, []int64{MaxLimit - 1, 1}},
		{Config{Algorithm: FixedWindow, Limit: MaxLimit, Window: MaxSpan}, []int64{MaxLimit - 1, 1}},
		{Config{Algorithm: SlidingCounter, Limit: MaxLimit, Window: MaxSpan}, []int64{MaxLimit - 1, 1}},
		{Config{Algorithm: SlidingLog, Limit: MaxSlidingLogLimit, Window: MaxSpan}, []int64{MaxSlidingLogLimit - 1, 1}},
		{Config{Algorithm: TokenBucket, Limit: 10, Window: MaxSpan}, []int64{9, 1}},
		{Config{Algorithm: TokenBucket, Limit: 1_000_000, Window: MaxSpan / 1000, Burst: 999_000_000 - 1}, []int64{999_000_000, 999_998, 1}},
		{Config{Algorithm: LeakyBucket, Limit: 10, Window: MaxSpan}, []int64{1}},
	} {
		cfg := tt.cfg
		t.Run(string(cfg.Algorithm), func(t *testing.T) {
			l := mustNew(t, cfg, nil)
			start := window.Floor(t0, w) // aligned: a fixed window starts here
			for i, n := range tt.fill {
				require.True(t, l.Acquire(start, n).OK, "n=%d", n)
				if i > 0 {
					continue
				}
				// With requests counted, n that never fits must not
				// overflow the count.
				for _, huge := range []int64{cfg.Limit + cfg.Burst + 1, math.MaxInt64 / 2, math.MaxInt64 - 1, math.MaxInt64} {
					d := l.Acquire(start, huge)
					require.False(t, d.OK, "n=%d never fits", huge)
					require.Positive(t, d.RetryAfter)
				}
			}
			d := l.Acquire(start, 1)
			require.False(t, d.OK, "the limit is spent")
			require.Positive(t, d.RetryAfter)
			require.LessOrEqual(t, d.RetryAfter, time.Duration(w)+cfg.Window, "a hint within the window")
			if cfg.Algorithm == SlidingCounter {
				// The previous window weighs on the next one: two
				// windows on, nothing is left of it.
				start += w
			}
			later := start + w + int64(d.RetryAfter)
			assert.True(t, l.Acquire(later, 1).OK, "admitted again once the window has passed")
		})
	}
}

// holesModel is the schedule of a leaky bucket whose requests all cost c:
// the slots live requests hold. A new request at now is owed the earliest
// start s >= now with [s, s+c) free of live slots.
type holesModel struct {
	c    int64
	live map[int64]bool // slot starts
}

func (m *holesModel) earliest(now int64) int64 {
	starts := []int64{now}
	for st := range m.live {
		if st+m.c >= now {
			starts = append(starts, st+m.c)
		}
	}
	sort.Slice(starts, func(i, j int) bool { return starts[i] < starts[j] })
	for _, s := range starts {
		if s < now {
			continue
		}
		free := true
		for st := range m.live {
			if st < s+m.c && s < st+m.c {
				free = false
				break
			}
		}
		if free {
			return s
		}
	}
	panic("unreachable")
}

// TestLeakyCancelledTurnsReused: after any pattern of cancellations, a new
// request waits exactly as long as the live requests ahead of it require
// (the earliest slot free of them), on a table of fake times. Before, a
// slot given back was reused only when it was the last one taken: after 24
// of 40 waiters left, the next waited for all 40.
func TestLeakyCancelledTurnsReused(t *testing.T) {
	const c = int64(100 * ms)
	t.Run("24 of 40 leave", func(t *testing.T) {
		l := mustNew(t, Config{Algorithm: LeakyBucket, Limit: 10, Window: s, MaxWait: 10 * s}, nil)
		var ds []Decision
		for range 40 {
			d := l.Acquire(0, 1)
			require.True(t, d.OK)
			ds = append(ds, d)
		}
		// Every other one of the first 32, then the last 8 stay.
		for i := 0; i < 32; i += 4 {
			l.Undo(ds[i], 1)
			l.Undo(ds[i+1], 1)
			l.Undo(ds[i+3], 1)
		}
		// Left: slots 2, 6, ..., 30 and 32..39. New requests take the
		// free slots in order, then those after the last.
		free := []int64{0, 1, 3, 4, 5, 7}
		for _, slot := range free {
			assert.Equal(t, time.Duration(slot*c), l.Acquire(0, 1).Wait)
		}
		for range 24 - len(free) - 1 {
			l.Acquire(0, 1)
		}
		assert.Equal(t, time.Duration(31*c), l.Acquire(0, 1).Wait, "the 24th takes the last slot given back")
		assert.Equal(t, time.Duration(40*c), l.Acquire(0, 1).Wait)
	})
	t.Run("random patterns", func(t *testing.T) {
		for seed := range uint64(200) {
			rng := rand.New(rand.NewPCG(seed, 7))
			l := mustNew(t, Config{Algorithm: LeakyBucket, Limit: 10, Window: s, MaxWait: 100 * s}, nil)
			m := &holesModel{c: c, live: map[int64]bool{}}
			held := map[int64]Decision{}
			now := int64(0)
			var log strings.Builder
			for i := range 300 {
				switch r := rng.IntN(10); {
				case r < 5: // a new request
					d := l.Acquire(now, 1)
					want := m.earliest(now)
					fmt.Fprintf(&log, "%d: acquire at %d -> wait %s (want %s)\n", i, now, d.Wait, time.Duration(want-now))
					require.True(t, d.OK, "seed %d\n%s", seed, log.String())
					require.Equal(t, time.Duration(want-now), d.Wait, "seed %d\n%s", seed, log.String())
					m.live[want] = true
					held[want] = d
				case r < 8 && len(held) > 0: // a waiter gives up
					var starts []int64
					for st := range held {
						if st > now { // still waiting
							starts = append(starts, st)
						}
					}
					if len(starts) == 0 {
						continue
					}
					sort.Slice(starts, func(i, j int) bool { return starts[i] < starts[j] })
					st := starts[rng.IntN(len(starts))]
					fmt.Fprintf(&log, "%d: undo slot %d\n", i, st)
					l.Undo(held[st], 1)
					delete(held, st)
					delete(m.live, st)
				default: // time passes, not on slot boundaries
					now += rng.Int64N(c * 3 / 2)
				}
			}
		}
	})
}

// TestLeakyCancelledTurnsExactCost: holes and the TAT keep fractions of a
// nanosecond: at 3 per second, a slot given back in the middle is taken
// again to the third of a nanosecond, and the TAT is unchanged.
func TestLeakyCancelledTurnsExactCost(t *testing.T) {
	l := mustNew(t, Config{Algorithm: LeakyBucket, Limit: 3, Window: s, MaxWait: 10 * s}, nil)
	var ds []Decision
	for range 6 {
		ds = append(ds, l.Acquire(0, 1))
	}
	l.Undo(ds[2], 1) // [666666666⅔, 1s)
	l.Undo(ds[3], 1) // [1s, 1333333333⅓)
	assert.Equal(t, time.Duration(666666667), l.Acquire(0, 1).Wait)
	assert.Equal(t, time.Duration(s), l.Acquire(0, 1).Wait)
	assert.Equal(t, 2*s, l.Acquire(0, 1).Wait, "the slots after the last one")
	l.Undo(ds[5], 1) // a middle slot again
	l.Undo(ds[4], 1)
	assert.Equal(t, time.Duration(1333333334), l.Acquire(0, 1).Wait)
}

// TestLeakyHoleRetryAfter: a request rejected while a slot given back lies
// beyond its MaxWait (a reload shortened it) is told to retry when that
// hole comes within reach, not when the TAT does, and the hole admits it
// then.
func TestLeakyHoleRetryAfter(t *testing.T) {
	cfg := Config{Algorithm: LeakyBucket, Limit: 10, Window: s, MaxWait: 500 * ms}
	l := mustNew(t, cfg, nil)
	var ds []Decision
	for range 5 { // slots [0, 500ms)
		d := l.Acquire(0, 1)
		require.True(t, d.OK)
		ds = append(ds, d)
	}
	l.Undo(ds[3], 1) // a hole [300ms, 400ms), the slot after it kept
	cfg.MaxWait = 250 * ms
	l = mustNew(t, cfg, l)
	d := l.Acquire(0, 1)
	require.False(t, d.OK)
	assert.Equal(t, time.Duration(50*ms), d.RetryAfter, "the hole is 50ms from reach, the TAT 250ms")
	assert.False(t, l.Acquire(int64(d.RetryAfter)-1, 1).OK, "rejected just before the hint")
	d = l.Acquire(int64(d.RetryAfter), 1)
	require.True(t, d.OK, "admitted into the hole at the hint")
	assert.Equal(t, time.Duration(250*ms), d.Wait)
}

// TestLeakyHolesBounded: the holes a bucket remembers are bounded; beyond
// them a slot given back is left empty, which only makes later requests
// wait longer.
func TestLeakyHolesBounded(t *testing.T) {
	l := mustNew(t, Config{Algorithm: LeakyBucket, Limit: int64(s / us), Window: s, MaxWait: s}, nil)
	var ds []Decision
	for range 3 * maxHoles {
		ds = append(ds, l.Acquire(0, 1))
	}
	for i := 0; i < len(ds)-1; i += 2 {
		l.Undo(ds[i], 1)
	}
	g := l.(*gcra)
	assert.Equal(t, maxHoles, len(g.st.holes.List))
	assert.Equal(t, int32(maxHoles), g.st.nholes.Load())
	assert.Equal(t, time.Duration(0), l.Acquire(0, 1).Wait, "the earliest hole is remembered")
}

// TestLeakyHolesSurviveReload: a slot given back before a reload is still
// taken after it, at the new rate.
func TestLeakyHolesSurviveReload(t *testing.T) {
	cfg := Config{Algorithm: LeakyBucket, Limit: 3, Window: s, MaxWait: 10 * s}
	l := mustNew(t, cfg, nil)
	var ds []Decision
	for range 4 {
		ds = append(ds, l.Acquire(0, 1))
	}
	l.Undo(ds[1], 1) // [333333333⅓, 666666666⅔)
	cfg.Limit = 6    // slots of 166666666⅔ns
	l = mustNew(t, cfg, l)
	assert.Equal(t, time.Duration(333333334), l.Acquire(0, 1).Wait, "the hole, shrunk to whole nanoseconds")
	// What is left of it, [500000000⅔, 666666666), is a little short of a
	// slot: the next ones go after the last slot (rounded up at the reload).
	assert.Equal(t, time.Duration(1333333334), l.Acquire(0, 1).Wait)
	assert.Equal(t, time.Duration(1500000001), l.Acquire(0, 1).Wait)
}

// TestFractionSurvivesReload: a bucket reloaded with another limit keeps
// its TAT, its fraction rounded up (it was in units of the old limit); the
// next decisions follow the new rate from there.
func TestFractionSurvivesReload(t *testing.T) {
	l := mustNew(t, Config{Algorithm: TokenBucket, Limit: 3, Window: s}, nil)
	require.True(t, l.Acquire(0, 2).OK) // TAT 666666666⅔ ahead of a full bucket
	l = mustNew(t, Config{Algorithm: TokenBucket, Limit: 7, Window: s}, l)
	// Full again at 666666667 (rounded up): 1s of capacity from there
	// minus 666666667 leaves room for 2 of 142857142⁶⁄₇ns.
	play(t, l, []step{
		{at: 0, n: 2, ok: true, remaining: 0},
		{at: 0, retry: 95238096},
	})
}
