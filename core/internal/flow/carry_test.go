package flow

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReloadKeepsWhatIsSpent spends a rule at T, reloads it at T+1s in
// another shape (Reload), and counts what passes at once: the counts,
// replayed into a window of another shape, or the requests a bucket owes,
// carry over, so a spent limit stays spent, a shorter window or a raised
// limit gives only what it allows beyond what was spent. Before the fix,
// the window algorithms started empty and a bucket kept its TAT (2 more
// passed a token bucket whose window doubled, none a raised limit's
// difference).
func TestReloadKeepsWhatIsSpent(t *testing.T) {
	const T = 100 * s
	m := time.Minute
	tests := []struct {
		name       string
		prev, next Config
		spend      int64
		want       int64
	}{
		{"leap-array window 1m to 2m", Config{Limit: 5, Window: m}, Config{Limit: 5, Window: 2 * m}, 5, 0},
		{"leap-array buckets 10 to 20", Config{Limit: 5, Window: m}, Config{Limit: 5, Window: m, Buckets: 20}, 5, 0},
		{"leap-array buckets 10 to 3", Config{Limit: 5, Window: m}, Config{Limit: 5, Window: m, Buckets: 3}, 5, 0},
		{"leap-array window 2m to 1m", Config{Limit: 5, Window: 2 * m}, Config{Limit: 5, Window: m}, 5, 0},
		{"leap-array limit 5 to 8, window 2m", Config{Limit: 5, Window: m}, Config{Limit: 8, Window: 2 * m}, 5, 3},
		{"fixed-window 1m to 2m", Config{Algorithm: FixedWindow, Limit: 5, Window: m}, Config{Algorithm: FixedWindow, Limit: 5, Window: 2 * m}, 5, 0},
		{"fixed-window 2m to 1m", Config{Algorithm: FixedWindow, Limit: 5, Window: 2 * m}, Config{Algorithm: FixedWindow, Limit: 5, Window: m}, 5, 0},
		{"sliding-counter 1m to 2m", Config{Algorithm: SlidingCounter, Limit: 5, Window: m}, Config{Algorithm: SlidingCounter, Limit: 5, Window: 2 * m}, 5, 0},
		{"sliding-counter 2m to 1m", Config{Algorithm: SlidingCounter, Limit: 5, Window: 2 * m}, Config{Algorithm: SlidingCounter, Limit: 5, Window: m}, 5, 0},
		{"token-bucket 1m to 2m", Config{Algorithm: TokenBucket, Limit: 5, Window: m}, Config{Algorithm: TokenBucket, Limit: 5, Window: 2 * m}, 5, 0},
		{"token-bucket 2m to 1m", Config{Algorithm: TokenBucket, Limit: 5, Window: 2 * m}, Config{Algorithm: TokenBucket, Limit: 5, Window: m}, 5, 0},
		{"token-bucket limit 5 to 6", Config{Algorithm: TokenBucket, Limit: 5, Window: m}, Config{Algorithm: TokenBucket, Limit: 6, Window: m}, 5, 1},
		{"token-bucket limit 10 to 20, half spent", Config{Algorithm: TokenBucket, Limit: 10, Window: m}, Config{Algorithm: TokenBucket, Limit: 20, Window: m}, 5, 15},
		{"token-bucket limit 3 to 7 per 1300ms (fractions)", Config{Algorithm: TokenBucket, Limit: 3, Window: 1300 * time.Millisecond}, Config{Algorithm: TokenBucket, Limit: 7, Window: 1300 * time.Millisecond}, 3, 6},
		{"token-bucket limit 10 to 5: spent, no more", Config{Algorithm: TokenBucket, Limit: 10, Window: m}, Config{Algorithm: TokenBucket, Limit: 5, Window: m}, 10, 0},
		{"leaky-bucket window 1m to 2m", Config{Algorithm: LeakyBucket, Limit: 5, Window: m, MaxWait: m}, Config{Algorithm: LeakyBucket, Limit: 5, Window: 2 * m, MaxWait: m}, 5, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prev := mustNew(t, tt.prev, nil)
			for i := range tt.spend {
				require.True(t, prev.Acquire(int64(T), 1).OK, "prev request %d", i)
			}
			now := int64(T + s)
			next, err := Reload(tt.next, prev, now)
			require.NoError(t, err)
			got := int64(0)
			for next.Acquire(now, 1).OK {
				got++
				require.Less(t, got, int64(100))
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

// TestReloadedCountsLeave: counts replayed into a window of another shape
// leave it no earlier than they would have (their old bucket's end plus
// the new window), and then do.
func TestReloadedCountsLeave(t *testing.T) {
	prev := mustNew(t, Config{Limit: 5, Window: 10 * s}, nil) // 1s buckets
	for range 5 {
		require.True(t, prev.Acquire(int64(100*s+300*ms), 1).OK)
	}
	next, err := Reload(Config{Limit: 5, Window: 20 * s, Buckets: 40}, prev, int64(101*s)) // 500ms buckets
	require.NoError(t, err)
	d := next.Acquire(int64(101*s), 1)
	require.False(t, d.OK)
	// The counts are in the new bucket [100.5s, 101s): they leave at 120.5s.
	assert.Equal(t, 19500*ms, d.RetryAfter)
	assert.False(t, next.Acquire(int64(120*s+499*ms), 1).OK)
	assert.True(t, next.Acquire(int64(120*s+500*ms), 1).OK)
}

// TestReloadWhileDeciding reloads every algorithm into another window while
// goroutines decide on the Limiter before: under -race, replays and
// conversions read the old state safely.
func TestReloadWhileDeciding(t *testing.T) {
	for _, alg := range Algorithms() {
		prev := mustNew(t, Config{Algorithm: alg, Limit: 100, Window: s}, nil)
		stop, done := make(chan struct{}), make(chan struct{})
		go func() {
			defer close(done)
			for i := int64(0); ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				if d := prev.Acquire(i*int64(ms), 1); i%3 == 0 {
					prev.Undo(d, 1)
				}
			}
		}()
		for i := range 20 {
			_, err := Reload(Config{Algorithm: alg, Limit: 100, Window: time.Duration(1+i%2) * s}, prev, int64(i)*int64(ms))
			require.NoError(t, err)
		}
		close(stop)
		<-done
	}
}

// TestReloadTightenAndRevertKeepsTheDebt spends a token bucket of 100/s
// and a burst of 100, reloads it to 10/s and straight back at the same
// instant: it owes what it owed, so nothing passes, as without the
// reloads. Before the fix, the debt was cut to the 10/s bucket's capacity
// on the way: 190 passed.
func TestReloadTightenAndRevertKeepsTheDebt(t *testing.T) {
	const T = int64(100 * s)
	wide := Config{Algorithm: TokenBucket, Limit: 100, Window: s, Burst: 100}
	l := mustNew(t, wide, nil)
	for i := range 200 {
		require.True(t, l.Acquire(T, 1).OK, "request %d", i)
	}
	var err error
	for _, cfg := range []Config{{Algorithm: TokenBucket, Limit: 10, Window: s}, wide} {
		l, err = Reload(cfg, l, T)
		require.NoError(t, err)
	}
	assert.False(t, l.Acquire(T, 1).OK)
	assert.True(t, l.Acquire(T+int64(10*ms), 1).OK, "after one request's refill")
}

// TestReloadBigCutWaitsAtTheNewRate cuts a token bucket of 1000/s and a
// burst of 1000, with 1000 spent (a second owed), to 1 per minute: the
// 1000 requests owed take 1000 minutes at the new rate, which RetryAfter
// tells, and the next request is admitted exactly then. Before the fix,
// the debt was cut to the new capacity: a request passed a minute later.
func TestReloadBigCutWaitsAtTheNewRate(t *testing.T) {
	const T = int64(100 * s)
	l := mustNew(t, Config{Algorithm: TokenBucket, Limit: 1000, Window: s, Burst: 1000}, nil)
	for range 1000 {
		require.True(t, l.Acquire(T, 1).OK)
	}
	l, err := Reload(Config{Algorithm: TokenBucket, Limit: 1, Window: time.Minute}, l, T)
	require.NoError(t, err)
	d := l.Acquire(T, 1)
	require.False(t, d.OK)
	assert.Equal(t, 1000*time.Minute, d.RetryAfter)
	assert.Zero(t, d.Remaining)
	assert.False(t, l.Acquire(T+int64(1000*time.Minute)-1, 1).OK, "a nanosecond early")
	d = l.Acquire(T+int64(1000*time.Minute), 1)
	assert.True(t, d.OK, "after the wait")
	assert.Equal(t, time.Minute, d.Next, "the next a minute later")
}
