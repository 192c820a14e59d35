package flow

import (
	"cmp"
	"math/bits"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core/ratemath"
)

const (
	ms = time.Millisecond
	us = time.Microsecond
	s  = time.Second
)

func mustNew(t testing.TB, cfg Config, prev Limiter) Limiter {
	t.Helper()
	l, err := New(cfg, prev)
	require.NoError(t, err)
	return l
}

// Acquire is AcquireTo returning the decision.
func (p *GCRA) Acquire(tat *atomic.Int64, now, n int64) (d Decision) {
	p.AcquireTo(&d, tat, now, n)
	return d
}

// AcquireOn is AcquireTo with the quota, returning the decision.
func (l *leapArray) AcquireOn(cpu uint32, now, n int64) (d Decision) {
	AcquireTo(l, &d, cpu, now, n, true)
	return d
}

// step is one Acquire of a table test and the Decision it must get.
type step struct {
	at        time.Duration // the reading of the clock
	n         int64         // default 1
	ok        bool
	remaining int64
	retry     time.Duration // RetryAfter
	wait      time.Duration // Wait
}

// play runs steps against l in order, comparing each decision's fields.
func play(t *testing.T, l Limiter, steps []step) {
	t.Helper()
	for i, st := range steps {
		st.n = cmp.Or(st.n, 1)
		d := l.Acquire(int64(st.at), st.n)
		got := step{at: st.at, n: st.n, ok: d.OK, remaining: d.Remaining, retry: d.RetryAfter, wait: d.Wait}
		assert.Equal(t, st, got, "step %d: Acquire(%s, %d)", i, st.at, st.n)
		if d.OK {
			assert.Zero(t, d.RetryAfter, "step %d: admitted with a retry-after", i)
		} else {
			assert.Zero(t, d.Wait, "step %d: rejected with a wait", i)
		}
	}
}

// replay returns a fresh Limiter of cfg that has seen steps (their decisions
// not checked).
func replay(t *testing.T, cfg Config, steps []step) Limiter {
	t.Helper()
	l := mustNew(t, cfg, nil)
	for _, st := range steps {
		l.Acquire(int64(st.at), cmp.Or(st.n, 1))
	}
	return l
}

func TestLeapArray(t *testing.T) {
	// 4 per second in 4 buckets of 250ms.
	l := mustNew(t, Config{Algorithm: LeapArray, Limit: 4, Window: s, Buckets: 4}, nil)
	play(t, l, []step{
		{at: 0, ok: true, remaining: 3},
		{at: 300 * ms, ok: true, remaining: 2},
		{at: 600 * ms, ok: true, remaining: 1},
		{at: 900 * ms, ok: true, remaining: 0},
		{at: 950 * ms, retry: 50 * ms},                       // bucket 0 leaves at 1s
		{at: 999 * ms, retry: 1 * ms},                        // the last nanosecond bucket 0 counts
		{at: 1000 * ms, n: 2, remaining: 1, retry: 250 * ms}, // one left with bucket 0, n=2 needs bucket 250 gone too
		{at: 1000 * ms, ok: true, remaining: 0},
		{at: 1249 * ms, retry: 1 * ms},
		{at: 1250 * ms, ok: true, remaining: 0}, // bucket 250 left: its count went with it
		{at: 1250 * ms, n: 5, retry: s},         // more than the limit: never fits
		{at: 1499 * ms, retry: 1 * ms},
		{at: 2249 * ms, n: 3, ok: true, remaining: 0}, // window (1s, 2s]: bucket 1250 (1) + 3
		{at: 2250 * ms, ok: true, remaining: 0},       // bucket 1250 left
		{at: 2250 * ms, n: 2, retry: 750 * ms},        // bucket 2000 (3) must leave for 2 to fit beside 2250 (1)
		{at: 2000 * ms, n: 2, retry: 1000 * ms},       // a reading behind: counted at 2250, retry on the caller's clock
	})
}

func TestFixedWindow(t *testing.T) {
	l := mustNew(t, Config{Algorithm: FixedWindow, Limit: 3, Window: s}, nil)
	play(t, l, []step{
		{at: 100 * ms, ok: true, remaining: 2},
		{at: 500 * ms, n: 2, ok: true, remaining: 0},
		{at: 700 * ms, retry: 300 * ms}, // until the window ends
		{at: 999 * ms, retry: 1 * ms},
		{at: 1000 * ms, n: 3, ok: true, remaining: 0}, // a new window: all of it at once
		{at: 1000 * ms, retry: s},
		{at: 1500 * ms, n: 4, retry: s},
		{at: 2000 * ms, n: 2, ok: true, remaining: 1},
		{at: 2000 * ms, n: 2, remaining: 1, retry: s},
		{at: 5999 * ms, n: 3, ok: true, remaining: 0}, // windows in between were idle
		{at: 5500 * ms, retry: 500 * ms},              // a reading behind counts in the current window
	})
}

func TestSlidingLog(t *testing.T) {
	l := mustNew(t, Config{Algorithm: SlidingLog, Limit: 3, Window: s}, nil)
	play(t, l, []step{
		{at: 0, ok: true, remaining: 2},
		{at: 300 * ms, ok: true, remaining: 1},
		{at: 600 * ms, ok: true, remaining: 0},
		{at: 700 * ms, n: 2, retry: 600 * ms}, // needs 0 and 300 gone: 300 leaves at 1.3s
		{at: 700 * ms, retry: 300 * ms},       // needs 0 gone
		{at: 999 * ms, retry: 1 * ms},
		{at: 1000 * ms, ok: true, remaining: 0}, // 0 left exactly one window later
		{at: 1300 * ms, n: 2, remaining: 1, retry: 300 * ms},
		{at: 1600 * ms, n: 2, ok: true, remaining: 0},
		{at: 1600 * ms, n: 4, retry: s},
		{at: 1999 * ms, retry: 1 * ms},
		{at: 9 * s, n: 3, ok: true, remaining: 0},
		{at: 8500 * ms, retry: 1500 * ms}, // a reading behind: retry on the caller's clock
	})
}

func TestSlidingCounter(t *testing.T) {
	l := mustNew(t, Config{Algorithm: SlidingCounter, Limit: 10, Window: s}, nil)
	play(t, l, []step{
		{at: 500 * ms, n: 10, ok: true, remaining: 0},
		// curr alone is full: the next window, where the 10 weigh
		// 10*(1-e) and 1 more fits at e = 100ms.
		{at: 600 * ms, retry: 500 * ms},
		{at: 1099 * ms, retry: 1 * ms}, // 10*0.901 + 1 > 10
		{at: 1100 * ms, ok: true, remaining: 0},
		{at: 1500 * ms, ok: true, remaining: 3},              // 10*0.5 + 2 = 7
		{at: 1500 * ms, n: 4, remaining: 3, retry: 100 * ms}, // 10*(1-e) + 2 + 4 <= 10 at e = 600ms
		{at: 1600 * ms, n: 4, ok: true, remaining: 0},        // 4 + 6 = 10
		{at: 2500 * ms, n: 11, remaining: 7, retry: s},       // 6*0.5 = 3 used
		{at: 3500 * ms, n: 10, ok: true, remaining: 0},       // window 2s had nothing
		{at: 5000 * ms, n: 10, ok: true, remaining: 0},       // window 4s skipped: no previous count
		{at: 4500 * ms, retry: 1600 * ms},                    // a reading behind counts in window 5s
	})
}

// TestSlidingCounterSeedExample is seed 004's example: 86 requests in the
// previous minute, 12 in the current one, 15s into it: 86*45/60 + 12 = 76.5.
func TestSlidingCounterSeedExample(t *testing.T) {
	cfg := Config{Algorithm: SlidingCounter, Limit: 100, Window: time.Minute}
	l := mustNew(t, cfg, nil).(*counter)
	require.True(t, l.Acquire(int64(10*s), 86).OK)
	require.True(t, l.Acquire(int64(61*s), 12).OK)

	now := int64(75 * s)
	c := l.ps.at(now, int64(time.Minute))
	assert.Equal(t, int64(86), c.prev)
	assert.Equal(t, int64(12), c.count.Load())
	assert.Equal(t, 76.5, l.estimate(c, now, c.count.Load()))

	// Consequence: 100 - 76.5 leaves 23 requests.
	play(t, l, []step{
		{at: 75 * s, n: 24, remaining: 23, retry: 348837210}, // 86*(60-e)/60 + 36 <= 100 at e = 60*22/86 s
		{at: 75 * s, n: 23, ok: true, remaining: 0},          // 64.5 + 35 = 99.5
		{at: 75 * s, remaining: 0, retry: 348837210},
		{at: 75*s + 348837209, remaining: 0, retry: 1},
		{at: 75*s + 348837210, ok: true, remaining: 0},
	})
}

func TestTokenBucket(t *testing.T) {
	// 10 per second: one token every 100ms, capacity 10 + 5.
	l := mustNew(t, Config{Algorithm: TokenBucket, Limit: 10, Window: s, Burst: 5}, nil)
	play(t, l, []step{
		{at: 0, n: 15, ok: true, remaining: 0}, // full at the start: limit + burst
		{at: 0, retry: 100 * ms},
		{at: 99 * ms, retry: 1 * ms},
		{at: 100 * ms, ok: true, remaining: 0}, // one token refilled
		{at: 350 * ms, n: 2, ok: true},         // 2.5 refilled
		{at: 400 * ms, ok: true},               // the half token completed
		{at: 450 * ms, retry: 50 * ms},
		{at: 10 * s, ok: true, remaining: 14},        // idle: full again, never above capacity
		{at: 10 * s, n: 16, remaining: 14, retry: s}, // more than the capacity
		{at: 10 * s, n: 14, ok: true, remaining: 0},
		{at: 10*s + 50*ms, retry: 50 * ms},
		{at: 10*s + 250*ms, n: 2, ok: true, remaining: 0},
		{at: 10*s + 550*ms, ok: true, remaining: 2}, // continuous: 0.5 + 3 refilled, 1 taken
		{at: 10 * s, n: 3, retry: 600 * ms},         // a reading behind sees less refilled
	})
}

func TestLeakyBucket(t *testing.T) {
	tests := []struct {
		name  string
		cfg   Config
		steps []step
	}{
		{
			name: "10 per second, maxWait 300ms",
			cfg:  Config{Algorithm: LeakyBucket, Limit: 10, Window: s, MaxWait: 300 * ms},
			steps: []step{
				{at: s, ok: true, remaining: 3},
				{at: s, ok: true, remaining: 2, wait: 100 * ms},
				{at: s, ok: true, remaining: 1, wait: 200 * ms},
				{at: s, ok: true, remaining: 0, wait: 300 * ms},
				{at: s, retry: 100 * ms}, // its slot would be 400ms away
				{at: 1100 * ms, ok: true, wait: 300 * ms},
				{at: 1150 * ms, n: 2, retry: 50 * ms},
				{at: 1200 * ms, n: 2, ok: true, wait: 300 * ms}, // slot 1.5s; then 1.7s is next
				{at: 1299 * ms, retry: 101 * ms},                // slot 1.7s is 401ms away
				{at: 1399 * ms, retry: 1 * ms},
				{at: 1400 * ms, ok: true, wait: 300 * ms},
				{at: 5 * s, ok: true, remaining: 3}, // idle: no backlog of slots
			},
		},
		{
			// Above 1000/s, whole milliseconds would make the cost 0.
			name: "5000 per second, 200µs slots",
			cfg:  Config{Algorithm: LeakyBucket, Limit: 5000, Window: s, MaxWait: ms},
			steps: []step{
				{at: 0, ok: true, remaining: 5},
				{at: 0, ok: true, remaining: 4, wait: 200000},
				{at: 0, ok: true, remaining: 3, wait: 400000},
				{at: 0, ok: true, remaining: 2, wait: 600000},
				{at: 0, ok: true, remaining: 1, wait: 800000},
				{at: 0, ok: true, remaining: 0, wait: 1000000},
				{at: 0, retry: 200000},
				{at: 100 * us, retry: 100000},
				{at: 200 * us, ok: true, remaining: 0, wait: 1000000},
				{at: 10 * ms, ok: true, remaining: 5},
			},
		},
		{
			// 3000/s: slots of 333333⅓ns, exactly; hints rounded up.
			name: "3000 per second, maxWait 0",
			cfg:  Config{Algorithm: LeakyBucket, Limit: 3000, Window: s},
			steps: []step{
				{at: 0, ok: true},
				{at: 0, retry: 333334},
				{at: 333333, retry: 1},
				{at: 333334, ok: true},
				{at: 666667, retry: 1},
				{at: 666668, ok: true},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { play(t, mustNew(t, tt.cfg, nil), tt.steps) })
	}
}

// allLimiters are configs of every algorithm with limit 5 per second, for
// tests of properties they all share.
var allLimiters = []struct {
	name string
	cfg  Config
}{
	{"leap-array", Config{Algorithm: LeapArray, Limit: 5, Window: s}},
	{"leap-array one bucket", Config{Algorithm: LeapArray, Limit: 5, Window: s, Buckets: 1}},
	{"fixed-window", Config{Algorithm: FixedWindow, Limit: 5, Window: s}},
	{"sliding-log", Config{Algorithm: SlidingLog, Limit: 5, Window: s}},
	{"sliding-counter", Config{Algorithm: SlidingCounter, Limit: 5, Window: s}},
	{"token-bucket", Config{Algorithm: TokenBucket, Limit: 5, Window: s}},
	{"token-bucket burst", Config{Algorithm: TokenBucket, Limit: 5, Window: s, Burst: 3}},
	{"leaky-bucket", Config{Algorithm: LeakyBucket, Limit: 5, Window: s, MaxWait: s}},
	{"leaky-bucket no wait", Config{Algorithm: LeakyBucket, Limit: 5, Window: s}},
	{"leap-array warm-up", Config{Algorithm: LeapArray, Limit: 5, Window: s, Warmup: 10 * s}},
	{"token-bucket warm-up", Config{Algorithm: TokenBucket, Limit: 5, Window: s, Warmup: 10 * s}},
}

// TestRetryAfterIsExact: a request rejected with RetryAfter r is rejected
// at r-1ns and admitted at r, when nothing else arrives.
func TestRetryAfterIsExact(t *testing.T) {
	for _, a := range allLimiters {
		t.Run(a.name, func(t *testing.T) {
			// Traffic at uneven times until a rejection.
			l := mustNew(t, a.cfg, nil)
			var hist []step
			var d Decision
			for at := 7 * s; ; at += 37 * ms {
				hist = append(hist, step{at: at})
				if d = l.Acquire(int64(at), 1); !d.OK {
					break
				}
				require.Less(t, at, 20*s, "never rejected")
			}
			last := hist[len(hist)-1].at
			r := d.RetryAfter
			require.Positive(t, r)
			hist = hist[:len(hist)-1] // the rejected one left no trace
			before := replay(t, a.cfg, hist).Acquire(int64(last+r-1), 1)
			assert.False(t, before.OK, "admitted at %s, 1ns before the retry-after %s", last+r-1, r)
			after := replay(t, a.cfg, hist).Acquire(int64(last+r), 1)
			assert.True(t, after.OK, "rejected at the retry-after %s", r)
		})
	}
}

// TestBoundaryBurst is seed 004's scenario: the limit at the end of one
// aligned window, the limit again at the start of the next. A fixed window
// lets 2x the limit through within 1ms; the others admit the limit.
func TestBoundaryBurst(t *testing.T) {
	const limit = 5
	tests := []struct {
		cfg  Config
		want int
	}{
		{Config{Algorithm: FixedWindow, Limit: limit}, 2 * limit}, // the documented weakness
		{Config{Algorithm: SlidingLog, Limit: limit}, limit},
		{Config{Algorithm: SlidingCounter, Limit: limit}, limit},
		{Config{Algorithm: LeapArray, Limit: limit}, limit},
	}
	for _, tt := range tests {
		l := mustNew(t, tt.cfg, nil)
		admitted := 0
		for _, at := range []time.Duration{999 * ms, 1000 * ms} {
			for range limit {
				if l.Acquire(int64(at), 1).OK {
					admitted++
				}
			}
		}
		assert.Equal(t, tt.want, admitted, "%s: admitted within [999ms, 1000ms]", tt.cfg.Algorithm)
	}
}

// TestClockBackwards steps the clock back after traffic at T, for every
// algorithm: no panic, the admissions at T still count, and before the clock
// catches up with T no more is admitted than the capacity left at T.
func TestClockBackwards(t *testing.T) {
	const T = 100 * s
	for _, a := range allLimiters {
		for _, back := range []time.Duration{time.Nanosecond, 400 * ms, 5 * s, 200 * s} { // the last to negative times
			capacity := int64(0) // what a fresh limiter admits at T
			for fresh := mustNew(t, a.cfg, nil); fresh.Acquire(int64(T), 1).OK; {
				capacity++
			}
			l := mustNew(t, a.cfg, nil)
			d := l.Acquire(int64(T), 1)
			require.True(t, d.OK, "%s: at T", a.name)
			left := d.Remaining

			admitted := int64(0)
			for at := T - back; at < T; at += max(back/50, 1) {
				if l.Acquire(int64(at), 1).OK {
					admitted++
				}
			}
			assert.LessOrEqual(t, admitted, left, "%s back %s: admitted before the clock caught up", a.name, back)
			for range capacity {
				if l.Acquire(int64(T), 1).OK {
					admitted++
				}
			}
			assert.LessOrEqual(t, 1+admitted, capacity, "%s back %s: admitted in all at T or earlier", a.name, back)
			// The limiter recovers once the clock moves past T.
			assert.True(t, l.Acquire(int64(T+10*s), 1).OK, "%s back %s: stuck after the clock caught up", a.name, back)
		}
	}
}

// TestClockBackwardsCountsKept: for every algorithm, once traffic at T has
// filled the limit, readings up to two windows earlier are all rejected.
func TestClockBackwardsCountsKept(t *testing.T) {
	const T = 100 * s
	for _, a := range allLimiters {
		l := mustNew(t, a.cfg, nil)
		n := int64(0)
		for l.Acquire(int64(T), 1).OK {
			n++
			require.Less(t, n, int64(100))
		}
		require.Positive(t, n)
		for at := T - 2*s; at < T; at += 10 * ms {
			require.False(t, l.Acquire(int64(at), 1).OK, "%s: admitted at %s after filling at %s", a.name, at, T)
		}
	}
}

func TestUndo(t *testing.T) {
	for _, a := range allLimiters {
		if a.cfg.Algorithm == LeakyBucket {
			continue // TestLeakyBucketUndo
		}
		t.Run(a.name, func(t *testing.T) {
			l := mustNew(t, a.cfg, nil)
			var last Decision
			n := 0
			for {
				d := l.Acquire(int64(10*s), 1)
				if !d.OK {
					// A rejected decision reserved nothing: undoing it
					// must not make room.
					l.Undo(d, 1)
					l.Undo(Decision{}, 1)
					require.False(t, l.Acquire(int64(10*s), 1).OK)
					break
				}
				last = d
				n++
				require.Less(t, n, 100)
			}
			l.Undo(last, 1)
			assert.True(t, l.Acquire(int64(10*s), 1).OK, "the undone slot is free again")
			assert.False(t, l.Acquire(int64(10*s), 1).OK, "and only that one")
		})
	}
}

func TestLeakyBucketUndo(t *testing.T) {
	l := mustNew(t, Config{Algorithm: LeakyBucket, Limit: 10, Window: s, MaxWait: s}, nil)
	a := l.Acquire(0, 1)
	b := l.Acquire(0, 1)
	require.Equal(t, 100*ms, b.Wait)
	l.Undo(b, 1) // the latest slot: rewound
	c := l.Acquire(0, 1)
	assert.Equal(t, 100*ms, c.Wait, "b's slot is given again")
	l.Undo(a, 1) // a later slot was taken since: a's is a hole
	assert.Equal(t, time.Duration(0), l.Acquire(0, 1).Wait, "a's slot is given again")
	assert.Equal(t, 200*ms, l.Acquire(0, 1).Wait)
	l.Undo(Decision{}, 1) // no panic, no effect
	l.Undo(l.Acquire(0, 100), 100)
	assert.Equal(t, 300*ms, l.Acquire(0, 1).Wait)
}

func TestTokenBucketUndoGivesTokensBack(t *testing.T) {
	l := mustNew(t, Config{Algorithm: TokenBucket, Limit: 10, Window: s, Burst: 5}, nil)
	d := l.Acquire(0, 15)
	require.True(t, d.OK)
	l.Undo(d, 5)
	play(t, l, []step{
		{at: 0, n: 5, ok: true},
		{at: 0, retry: 100 * ms},
	})
}

// TestReload: New(cfg, prev) keeps the state that means the same under cfg.
func TestReload(t *testing.T) {
	const T = 10 * s
	tests := []struct {
		name       string
		prev, next Config
		prevN      int64 // admitted by prev at T
		want       int64 // then admitted by next at T, one at a time
	}{
		{"leap-array limit raised", Config{Limit: 5}, Config{Limit: 10}, 5, 5},
		{"leap-array limit lowered", Config{Limit: 10}, Config{Limit: 4}, 3, 1},
		// Counts carry over into a window of another shape (replayed).
		{"leap-array buckets changed", Config{Limit: 5}, Config{Limit: 10, Buckets: 5}, 5, 5},
		{"leap-array window changed", Config{Limit: 5}, Config{Limit: 10, Window: 2 * s}, 5, 5},
		{"fixed-window limit raised", Config{Algorithm: FixedWindow, Limit: 5}, Config{Algorithm: FixedWindow, Limit: 10}, 5, 5},
		{"fixed-window window changed", Config{Algorithm: FixedWindow, Limit: 5}, Config{Algorithm: FixedWindow, Limit: 10, Window: 2 * s}, 5, 5},
		{"sliding-counter limit raised", Config{Algorithm: SlidingCounter, Limit: 5}, Config{Algorithm: SlidingCounter, Limit: 10}, 5, 5},
		{"sliding-counter window changed", Config{Algorithm: SlidingCounter, Limit: 5}, Config{Algorithm: SlidingCounter, Limit: 10, Window: 2 * s}, 5, 5},
		{"sliding-log limit raised", Config{Algorithm: SlidingLog, Limit: 5}, Config{Algorithm: SlidingLog, Limit: 10}, 5, 5},
		{"sliding-log limit lowered", Config{Algorithm: SlidingLog, Limit: 10}, Config{Algorithm: SlidingLog, Limit: 3}, 2, 1},
		{"sliding-log window changed: timestamps still hold", Config{Algorithm: SlidingLog, Limit: 5}, Config{Algorithm: SlidingLog, Limit: 10, Window: 2 * s}, 5, 5},
		// A token bucket keeps the time it needs to refill: half empty
		// stays half empty at the new rate.
		{"token-bucket limit raised", Config{Algorithm: TokenBucket, Limit: 10}, Config{Algorithm: TokenBucket, Limit: 20}, 5, 10},
		{"token-bucket to leaky-bucket: the TAT carries over", Config{Algorithm: TokenBucket, Limit: 10}, Config{Algorithm: LeakyBucket, Limit: 10}, 10, 0},
		{"leaky-bucket slots kept", Config{Algorithm: LeakyBucket, Limit: 10}, Config{Algorithm: LeakyBucket, Limit: 10, MaxWait: 250 * ms}, 1, 2},
		{"fixed-window to sliding-counter: the periods carry over", Config{Algorithm: FixedWindow, Limit: 5}, Config{Algorithm: SlidingCounter, Limit: 5}, 5, 0},
		{"leap-array to sliding-counter: not carried", Config{Limit: 5}, Config{Algorithm: SlidingCounter, Limit: 5}, 5, 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prev := mustNew(t, tt.prev, nil)
			for i := range tt.prevN {
				require.True(t, prev.Acquire(int64(T), 1).OK, "prev request %d", i)
			}
			next := mustNew(t, tt.next, prev)
			assert.Equal(t, tt.next.WithDefaults(), next.Config())
			got := int64(0)
			for next.Acquire(int64(T), 1).OK {
				got++
				require.Less(t, got, int64(100))
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

// TestReloadUndoOfPreviousLimiter: a reservation made before a reload and
// undone after it is given back to the shared counts.
func TestReloadUndoOfPreviousLimiter(t *testing.T) {
	prev := mustNew(t, Config{Limit: 2}, nil)
	d := prev.Acquire(int64(s), 1)
	require.True(t, d.OK)
	next := mustNew(t, Config{Limit: 2}, prev)
	require.True(t, next.Acquire(int64(s), 1).OK)
	require.False(t, next.Acquire(int64(s), 1).OK)
	prev.Undo(d, 1)
	assert.True(t, next.Acquire(int64(s), 1).OK)
}

func TestZeroLimitBlocksEverything(t *testing.T) {
	for _, alg := range Algorithms() {
		l := mustNew(t, Config{Algorithm: alg, Limit: 0}, nil)
		for _, at := range []time.Duration{0, s, time.Hour} {
			d := l.Acquire(int64(at), 1)
			assert.False(t, d.OK, "%s at %s", alg, at)
			assert.Zero(t, d.Remaining, "%s at %s", alg, at)
			assert.Positive(t, d.RetryAfter, "%s at %s", alg, at)
		}
	}
}

// TestGCRAPrepareSameDecisions: a prepared GCRA decides exactly as an
// unprepared one, for token and leaky buckets, requests of one and of many.
func TestGCRAPrepareSameDecisions(t *testing.T) {
	params := []GCRA{
		{Limit: 3, Window: time.Second, Burst: 2},
		{Limit: 7, Window: 1300 * time.Millisecond},
		{Limit: 5000, Window: time.Second, MaxWait: 3 * time.Millisecond, Queue: true},
		{Limit: 3, Window: time.Second, MaxWait: time.Second, Queue: true},
		{Limit: int64(time.Second), Window: time.Second, Burst: 1 << 20}, // one per nanosecond
		{Limit: 1000, Window: 1000, Burst: 100},
	}
	for _, p := range params {
		var plain, prepared atomic.Int64
		pp := p.Prepare()
		for i := range 200 {
			now := int64(i) * int64(137*time.Microsecond)
			n := int64(1 + i%3)
			got, want := pp.Acquire(&prepared, now, n), p.Acquire(&plain, now, n)
			require.Equal(t, want.OK, got.OK, "%+v step %d", p, i)
			require.Equal(t, want.Remaining, got.Remaining, "%+v step %d", p, i)
			require.Equal(t, want.RetryAfter, got.RetryAfter, "%+v step %d", p, i)
			require.Equal(t, want.Wait, got.Wait, "%+v step %d", p, i)
			require.Equal(t, plain.Load(), prepared.Load(), "%+v step %d", p, i)
		}
	}
}

// scaleOf returns x*num/den, rounded down, for 0 <= x, by reciprocal(num,
// den) when it is not 0: q = x*reciprocal/2^64 is the quotient or one less,
// and q+1 is the quotient when (q+1)*den <= x*num.
func scaleOf(x, num, den int64) int64 {
	frac := reciprocal(num, den)
	if frac == 0 {
		return ratemath.MulDiv(x, num, den)
	}
	q, _ := bits.Mul64(uint64(x), frac)
	hi, lo := bits.Mul64(uint64(x), uint64(num))
	h1, l1 := bits.Mul64(q+1, uint64(den))
	if h1 < hi || h1 == hi && l1 <= lo {
		q++
	}
	return int64(q)
}

// TestScaleMatchesMulDiv: scaleOf, which multiplies by a precomputed
// reciprocal, returns exactly what mulDiv does, at the edges of its range
// and for random operands.
func TestScaleMatchesMulDiv(t *testing.T) {
	const maxInt = 1<<63 - 1
	type tc struct{ x, num, den int64 }
	tests := []tc{
		{0, 1, 3}, {1, 1, 3}, {3, 1, 3}, {maxInt, 1, 3}, {maxInt, maxInt - 1, maxInt},
		{maxInt, 1, maxInt}, {maxInt - 1, maxInt - 2, maxInt - 1}, {int64(s), 999_999_999, int64(s)},
		{1 << 62, 1, 2}, {(1 << 62) + 1, 1, 2}, {12345, 0, 7}, {5, 7, 7}, {5, 9, 7}, // num >= den: mulDiv
	}
	rng := uint64(0x9e3779b97f4a7c15)
	next := func() int64 { // xorshift: reproducible operands
		rng ^= rng << 13
		rng ^= rng >> 7
		rng ^= rng << 17
		return int64(rng >> 1)
	}
	for range 20000 {
		den := max(next()>>(next()%63), 1)
		tests = append(tests, tc{next() >> (next() % 63), next() % den, den})
	}
	for _, tt := range tests {
		got, want := scaleOf(tt.x, tt.num, tt.den), ratemath.MulDiv(tt.x, tt.num, tt.den)
		require.Equal(t, want, got, "%d*%d/%d", tt.x, tt.num, tt.den)
	}
}

// TestGCRADecideMatchesAcquire: DecideAt on a plain TAT, stored by the
// caller, makes exactly the decisions Acquire makes on an atomic one (whose
// fraction is dropped), for token and leaky buckets, prepared or not,
// requests of one and of many, including ones that never fit and a limit
// of 0; DecideAt overwrites every field of the Decision it is given.
func TestGCRADecideMatchesAcquire(t *testing.T) {
	params := []GCRA{
		{Limit: 3, Window: time.Second, Burst: 2},
		{Limit: 5000, Window: time.Second, MaxWait: 3 * time.Millisecond, Queue: true},
		{Limit: 0, Window: time.Second},
	}
	for _, p := range params {
		for _, p := range []GCRA{p, p.Prepare()} {
			var atomicTAT atomic.Int64
			var plain Instant
			for i := range 300 {
				now := int64(i) * int64(137*time.Microsecond)
				n := int64(1 + i%7) // 6 and 7 never fit the first bucket
				want := p.Acquire(&atomicTAT, now, n)
				got := Decision{OK: true, Wait: 1, Limit: 1, Remaining: 1, RetryAfter: 1, ref: 1, mark: 1}
				plain = at(p.DecideAt(&got, plain, now, n, true).NS)
				require.Equal(t, want, got, "%+v step %d", p, i)
				require.Equal(t, atomicTAT.Load(), plain.NS, "%+v step %d", p, i)
			}
		}
	}
}
