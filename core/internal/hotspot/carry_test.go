package hotspot

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReloadKeepsWhatValuesOwe spends "alice" (and half of "bob") at T,
// reloads at T+1s with another window, limit, override, MaxKeys or
// algorithm, and counts what each passes at once: every value keeps the
// requests it owes. Before the fix, a new table (MaxKeys, algorithm) gave
// every value a full bucket, a longer window kept the TAT (half a bucket
// back) and a raised limit gave less than the difference.
func TestReloadKeepsWhatValuesOwe(t *testing.T) {
	const T = int64(100 * time.Second)
	m := time.Minute
	base := Config{Limit: 10, Window: m, MaxKeys: 1000}
	tests := []struct {
		name       string
		change     func(*Config)
		alice, bob int64
	}{
		{"unchanged", func(*Config) {}, 0, 5},
		{"window 1m to 2m", func(c *Config) { c.Window = 2 * m }, 0, 5},
		{"window 1m to 30s", func(c *Config) { c.Window = m / 2 }, 0, 5},
		{"limit 10 to 12", func(c *Config) { c.Limit = 12 }, 2, 7},
		{"override for bob 20", func(c *Config) { c.Overrides = map[string]int64{"bob": 20} }, 0, 15},
		{"maxKeys 1000 to 2000", func(c *Config) { c.MaxKeys = 2000 }, 0, 5},
		{"maxKeys 1000 to 100", func(c *Config) { c.MaxKeys = 100 }, 0, 5},
		// A leaky bucket waiting at most its window less a request holds as
		// many as the token bucket.
		// A leaky bucket waiting at most its window less a request holds as
		// many as the token bucket.
		{"token to leaky bucket", func(c *Config) { c.Algorithm = LeakyBucket; c.MaxWait = m * 9 / 10 }, 0, 5},
		{"token to leaky bucket, window 2m", func(c *Config) { c.Algorithm = LeakyBucket; c.Window, c.MaxWait = 2*m, 2*m*9/10 }, 0, 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			prev := mustNew(t, base, nil)
			for range 10 {
				require.True(t, prev.Acquire(T, "alice", 1).OK)
			}
			for range 5 {
				require.True(t, prev.Acquire(T, "bob", 1).OK)
			}
			for i := range 50 {
				prev.Acquire(T, fmt.Sprint("other", i), 1)
			}
			cfg := base
			tt.change(&cfg)
			now := T // no refill: the counts below are exact
			l, err := Reload(cfg, prev, now)
			require.NoError(t, err)
			count := func(v string) (n int64) {
				for l.Acquire(now, v, 1).OK {
					n++
					require.Less(t, n, int64(100))
				}
				return n
			}
			assert.Equal(t, tt.alice, count("alice"), "alice")
			assert.Equal(t, tt.bob, count("bob"), "bob")
		})
	}
}

// BenchmarkReloadCarry1M measures Reload of a table of 1 000 000 values
// whose buckets are not full into one of another MaxKeys (a new table:
// every record carried) and into the same table with another window
// (every TAT converted in place).
func BenchmarkReloadCarry1M(b *testing.B) {
	const n = 1_000_000
	cfg := Config{Limit: 5, Window: time.Minute, MaxKeys: 2 * n}
	prev := mustNew(b, cfg, nil)
	for i := range n {
		prev.Acquire(1, fmt.Sprint(i), 1)
	}
	b.Run("maxKeys", func(b *testing.B) {
		c := cfg
		for i := 0; b.Loop(); i++ {
			c.MaxKeys = 2*n + 1 + i%2
			if _, err := Reload(c, prev, 2); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("window", func(b *testing.B) {
		c := cfg
		for i := 0; b.Loop(); i++ {
			c.Window = time.Minute + time.Duration(i%2)*time.Minute
			if _, err := Reload(c, prev, 2); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestReloadKeepsDebts spends "alice" at T, evicts her with a flood of
// other values, each sent twice (her debt is in her shard's cells), then reloads at T with
// another algorithm, MaxKeys or window: she still owes her bucket, in a
// table of the same shards (cells copied), of more (copied to each shard
// of her values) or of fewer (merged), with her debt converted to the new
// window. Before the fix, the new table forgot every debt: 10 passed.
func TestReloadKeepsDebts(t *testing.T) {
	const T = int64(100 * time.Second)
	m := time.Minute
	base := Config{Limit: 10, Window: m, MaxKeys: 1000}
	for _, tt := range []struct {
		name   string
		change func(*Config)
	}{
		{"leaky bucket", func(c *Config) { c.Algorithm, c.MaxWait = LeakyBucket, m*9/10 }},
		{"maxKeys 1000 to 4000", func(c *Config) { c.MaxKeys = 4000 }},
		{"maxKeys 1000 to 200", func(c *Config) { c.MaxKeys = 200 }},
		{"maxKeys 1000 to 4000, window 2m", func(c *Config) { c.MaxKeys, c.Window = 4000, 2*m }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			prev := mustNew(t, base, nil)
			for range 10 {
				require.True(t, prev.Acquire(T, "alice", 1).OK)
			}
			for i := range 5000 {
				prev.Acquire(T, fmt.Sprint("junk", i), 1)
				prev.Acquire(T, fmt.Sprint("junk", i), 1)
			}
			k := prev.tab.idOf("alice")
			_, s := prev.tab.shard(k)
			require.Negative(t, s.find(k), "alice is evicted")
			cfg := base
			tt.change(&cfg)
			l, err := Reload(cfg, prev, T)
			require.NoError(t, err)
			assert.False(t, l.Acquire(T, "alice", 1).OK, "alice")
			assert.LessOrEqual(t, l.Len(), cfg.MaxKeys)
			// Her first request fits again after one new request's cost.
			cost := int64(cfg.Window) / cfg.Limit
			assert.False(t, l.Acquire(T+cost-1, "alice", 1).OK, "alice before a request's cost")
			assert.True(t, l.Acquire(T+cost, "alice", 1).OK, "alice after a request's cost")
		})
	}
}

// TestReloadWhileDeciding reloads (another window, then another MaxKeys and
// algorithm) while goroutines decide and give back on the Limiter before:
// under -race, the carry reads every shard under its lock.
func TestReloadWhileDeciding(t *testing.T) {
	prev := mustNew(t, Config{Limit: 3, Window: time.Second, MaxKeys: 500}, nil)
	stop := make(chan struct{})
	done := make(chan struct{})
	for g := range 2 {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := int64(0); ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				d := prev.Acquire(i, fmt.Sprint(g, i%700), 1)
				if i%3 == 0 {
					prev.Undo(d, 1)
				}
			}
		}()
	}
	var l *Limiter
	var err error
	for i := range 20 {
		cfg := Config{Limit: 3, Window: time.Duration(1+i%2) * time.Second, MaxKeys: 500}
		if i%4 == 3 {
			cfg.MaxKeys, cfg.Algorithm, cfg.MaxWait = 300, LeakyBucket, time.Second
		}
		l, err = Reload(cfg, prev, int64(i))
		require.NoError(t, err)
		require.LessOrEqual(t, l.Len(), cfg.MaxKeys)
	}
	close(stop)
	<-done
	<-done
}

// TestReloadTightenAndRevertKeepsTheDebt spends "alice" on a token bucket
// of 100/s and a burst of 100, tracked or evicted by a flood (her debt in
// her shard's cells), and reloads to 10/s and straight back at the same
// instant: she owes what she owed, so nothing passes, as without the
// reloads, and one request's refill later one does. Before the fix, her
// debt was cut to the 10/s bucket's capacity on the way: 190 passed.
func TestReloadTightenAndRevertKeepsTheDebt(t *testing.T) {
	const T = int64(100 * time.Second)
	wide := Config{Limit: 100, Window: time.Second, Burst: 100, MaxKeys: 1000}
	narrow := wide
	narrow.Limit, narrow.Burst = 10, 0
	for _, evicted := range []bool{false, true} {
		t.Run(fmt.Sprint("evicted ", evicted), func(t *testing.T) {
			l := mustNew(t, wide, nil)
			for i := range 200 {
				require.True(t, l.Acquire(T, "alice", 1).OK, "request %d", i)
			}
			for i := 0; evicted && i < 5000; i++ {
				l.Acquire(T, fmt.Sprint("junk", i), 1)
				l.Acquire(T, fmt.Sprint("junk", i), 1)
			}
			k := l.tab.idOf("alice")
			_, s := l.tab.shard(k)
			require.Equal(t, evicted, s.find(k) < 0, "alice is evicted")
			var err error
			for _, cfg := range []Config{narrow, wide} {
				l, err = Reload(cfg, l, T)
				require.NoError(t, err)
			}
			assert.False(t, l.Acquire(T, "alice", 1).OK)
			assert.True(t, l.Acquire(T+int64(10*time.Millisecond), "alice", 1).OK, "after one request's refill")
		})
	}
}
