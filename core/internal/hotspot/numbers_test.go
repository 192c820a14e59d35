package hotspot

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core/internal/bucketmodel"
	"github.com/sluicekit/sluice/core/internal/flow"
)

const us = time.Microsecond

// model returns the exact model of a bucket of limit lim under cfg.
func model(cfg Config, lim int64) *bucketmodel.Bucket {
	c := cfg.WithDefaults()
	return &bucketmodel.Bucket{Limit: lim, Window: c.Window, Burst: c.Burst, MaxWait: c.MaxWait, Leaky: c.Algorithm == LeakyBucket}
}

// decide returns the model's decision of n at now, as a flow.Decision.
func decide(m *bucketmodel.Bucket, now, n int64) flow.Decision {
	ok, wait, retry := m.Acquire(now, n)
	return flow.Decision{OK: ok, Wait: wait, Limit: m.Limit, Remaining: m.Remaining(now), RetryAfter: retry}
}

// TestBucketsExactAtEveryRate: every value's token or leaky bucket, its
// limit's or its override's, follows the exact rational definition at rates
// whose cost is not a whole number of nanoseconds, up to one request per
// nanosecond, and at the largest burst and wait the rules allow. Before,
// a value's TAT was whole nanoseconds and each request's cost was rounded
// down: 6e8 per second admitted 1e9 (1.67x).
func TestBucketsExactAtEveryRate(t *testing.T) {
	day := 24 * time.Hour
	maxBurst := int64(flow.MaxSpan-day) / int64(day) * 2 // (MaxSpan-day)*2/day, as flow.BucketBounds
	cfgs := []Config{
		{Algorithm: TokenBucket, Limit: 6e8, Window: s},
		{Algorithm: LeakyBucket, Limit: 6e8, Window: s, MaxWait: us},
		{Algorithm: TokenBucket, Limit: 3, Window: s},
		{Algorithm: TokenBucket, Limit: 3, Window: s, Burst: 2},
		{Algorithm: LeakyBucket, Limit: 3000, Window: s, MaxWait: ms},
		{Algorithm: LeakyBucket, Limit: 3, Window: s, MaxWait: 2 * s},
		{Algorithm: TokenBucket, Limit: int64(s), Window: s},     // one per nanosecond
		{Algorithm: TokenBucket, Limit: int64(s) - 1, Window: s}, // cost 1ns plus a billionth
		{Algorithm: LeakyBucket, Limit: int64(s) - 1, Window: s}, // maxWait 0
		{Algorithm: TokenBucket, Limit: flow.MaxLimit, Window: flow.MaxSpan},
		{Algorithm: TokenBucket, Limit: flow.MaxLimit - 1, Window: flow.MaxSpan},
		{Algorithm: LeakyBucket, Limit: flow.MaxLimit - 3, Window: flow.MaxSpan, MaxWait: us},
		{Algorithm: TokenBucket, Limit: 7, Window: day, Burst: 300}, // 7 per day
		{Algorithm: TokenBucket, Limit: 2, Window: day, Burst: maxBurst},
		{Algorithm: LeakyBucket, Limit: 7, Window: day, MaxWait: flow.MaxSpan},
	}
	for _, cfg := range cfgs {
		// Each rule's values: one of its limit, one of an override whose
		// cost has another fraction (higher with a burst, which is bounded
		// for the lowest limit).
		vip := cfg.Limit/3*2 + 1
		if cfg.Burst > 0 {
			vip = 3*cfg.Limit + 5
		}
		cfg.Overrides = map[string]int64{"vip": vip}
		name := fmt.Sprintf("%s %d per %s burst %d maxWait %s", cfg.Algorithm, cfg.Limit, cfg.Window, cfg.Burst, cfg.MaxWait)
		t.Run(name, func(t *testing.T) {
			l := mustNew(t, cfg, nil)
			models := map[string]*bucketmodel.Bucket{}
			for v, lim := range map[string]int64{"a": cfg.Limit, "vip": cfg.Overrides["vip"]} {
				models[v] = model(cfg, lim)
			}
			rng := rand.New(rand.NewPCG(1, uint64(cfg.Limit)))
			now := int64(1 << 40)
			admitted := 0
			for i := range 6000 {
				v := "a"
				if i%3 == 0 {
					v = "vip"
				}
				m := models[v]
				// Steps around the cost: the bucket stays near full and
				// near empty, where rounding would show.
				now += int64(rng.Float64() * 2 * float64(cfg.Window) / float64(m.Limit))
				n := int64(1)
				if i%7 == 0 {
					n = 1 + rng.Int64N(3)
				}
				d := l.Acquire(now, v, n)
				want := decide(m, now, n)
				require.Equal(t, want, outcome(d), "step %d: Acquire(%d, %s, %d)", i, now, v, n)
				if d.OK {
					admitted++
				}
			}
			assert.Positive(t, admitted)
		})
	}
}

// TestHighRateAdmitsTheLimit: at 6e8 per second (600 per µs) per value,
// requests every nanosecond for 10µs after the bucket or queue is spent
// get 6000 slots, not 10 000 (1.67x) as when the cost was rounded down.
func TestHighRateAdmitsTheLimit(t *testing.T) {
	for _, cfg := range []Config{
		{Algorithm: TokenBucket, Limit: 600, Window: us},
		{Algorithm: LeakyBucket, Limit: 600, Window: us, MaxWait: us},
	} {
		l := mustNew(t, cfg, nil)
		for l.Acquire(0, "u", 1).OK { // a token bucket starts full
		}
		admitted := 0
		for now := int64(1); now <= 10_000; now++ {
			if l.Acquire(now, "u", 1).OK {
				admitted++
			}
		}
		assert.Equal(t, 6000, admitted, "%s", cfg.Algorithm)
	}
}

// TestFractionsThroughEvictionAndFront: a value's fraction travels with its
// state when it becomes its shard's front and back (decisions stay those of
// the exact model), and an evicted value's debt is its TAT rounded up:
// never less.
func TestFractionsThroughEvictionAndFront(t *testing.T) {
	cfg := Config{Limit: 3, Window: s, MaxKeys: 2} // one shard of 2
	l := mustNew(t, cfg, nil)
	models := map[string]*bucketmodel.Bucket{}
	for _, v := range []string{"a", "b"} {
		models[v] = model(cfg, 3)
	}
	now := int64(0)
	for i, v := range strings.Split("aabbabbaaabababbbaabaabb", "") {
		now += 100_000_001
		d := l.Acquire(now, v, 1)
		require.Equal(t, decide(models[v], now, 1), outcome(d), "step %d: %s at %d", i, v, now)
	}
	require.Len(t, l.tab.shards, 1)
	require.Equal(t, recOf(t, l, "b"), l.tab.shards[0].frontRec, "b is the front")

	// One record: a's TAT 666666666⅔ is evicted as a debt of 666666667.
	l = mustNew(t, Config{Limit: 3, Window: s, MaxKeys: 1}, nil)
	play(t, l, []step{
		{value: "a", n: 2, ok: true, limit: 3, remaining: 1},
		{value: "b", ok: true, limit: 3, remaining: 2},               // evicts a
		{value: "a", n: 2, limit: 3, remaining: 0, retry: 333333334}, // 333333333⅔ over (exact: ⅓)
		{at: 333333334, value: "a", n: 2, ok: true, limit: 3, remaining: 0},
	})
}

// TestFractionsAcrossReload: fractions are in units of a value's limit. A
// reload that changes limits rounds every TAT up to a nanosecond (the new
// decisions start from there, exactly), and the old Limiter, still
// deciding the requests that read the rules before the reload, rounds up
// too: neither admits early. A reload that keeps the limits keeps the
// fractions.
func TestFractionsAcrossReload(t *testing.T) {
	cfg := Config{Limit: 3, Window: s}
	l1 := mustNew(t, cfg, nil)
	require.True(t, l1.Acquire(0, "a", 2).OK) // TAT 666666666⅔
	same := mustNew(t, Config{Limit: 3, Window: 2 * s}, l1)
	assert.Equal(t, l1.epoch, same.epoch, "the same limits: the fractions stay")
	l2 := mustNew(t, Config{Limit: 7, Window: s}, same)
	// Full again at 666666667 (rounded up): 1s of capacity from there
	// minus 666666667 leaves room for 2 of 142857142⁶⁄₇ns.
	play(t, l2, []step{
		{at: 0, value: "a", n: 2, ok: true, limit: 7, remaining: 0},
		{at: 0, value: "a", limit: 7, retry: 95238096},
	})
	// TAT 952380952⁵⁄₇. The old Limiter reads it rounded up and writes
	// whole nanoseconds.
	play(t, l1, []step{
		{at: 0, value: "a", limit: 3, retry: 285714287},                     // 952380953 + 333333333⅓ - 1s
		{at: 285714287, value: "a", ok: true, limit: 3, remaining: 0},       // TAT 1285714286⅓, rounded up
		{at: 285714287, value: "b", n: 3, ok: true, limit: 3, remaining: 0}, // TAT 1285714287
	})
	play(t, l2, []step{
		{at: 285714287, value: "a", limit: 7, retry: 142857143},             // 1285714287 + 142857142⁶⁄₇ - 1285714287
		{at: 285714287 + 142857143, value: "a", ok: true, limit: 7},         // TAT 1428571429⁶⁄₇
		{at: 285714287 + 142857143, value: "a", limit: 7, retry: 142857143}, // TAT + 142857142⁶⁄₇ - now: 142857142⁵⁄₇
	})
}

// TestNeverFitsAtTheEdges: a request of more than a bucket holds is
// rejected, whatever n, without touching the bucket.
func TestNeverFitsAtTheEdges(t *testing.T) {
	for _, cfg := range []Config{
		{Algorithm: TokenBucket, Limit: flow.MaxLimit, Window: flow.MaxSpan},
		{Algorithm: TokenBucket, Limit: 1_000_000, Window: flow.MaxSpan / 1000, Burst: 999_000_000 - 1},
		{Algorithm: LeakyBucket, Limit: 10, Window: flow.MaxSpan, MaxWait: flow.MaxSpan},
	} {
		l := mustNew(t, cfg, nil)
		const t0 = int64(1) << 61
		require.True(t, l.Acquire(t0, "a", 1).OK)
		for _, huge := range []int64{cfg.Limit + cfg.Burst + 1, math.MaxInt64 / 2, math.MaxInt64} {
			d := l.Acquire(t0, "a", huge)
			require.False(t, d.OK, "n=%d never fits", huge)
			require.Equal(t, cfg.Window, d.RetryAfter)
		}
		d := l.Acquire(t0, "a", cfg.Limit+cfg.Burst-1)
		require.True(t, d.OK, "%s: the rest of the bucket", cfg.Algorithm)
	}
}

// TestBoundsRefused: a Config beyond what the buckets honour exactly is
// refused by New, naming the field and the largest value allowed (for the
// lowest of the limit and the overrides); the largest values are accepted.
func TestBoundsRefused(t *testing.T) {
	day := 24 * time.Hour
	for _, tc := range []struct {
		cfg   Config
		field string
		most  string
	}{
		{Config{Limit: 2, Window: day, Burst: 1_000_000}, "burst", "must be <= 102 "},
		{Config{Limit: 200, Window: day, Burst: 1_000_000, Overrides: map[string]int64{"low": 2}}, "burst", "must be <= 102 "},
		{Config{Limit: 1, Window: math.MaxInt64}, "window", "must be <= 1250h59m59.627370496s (4503599627370496 ns)"},
		{Config{Algorithm: LeakyBucket, Limit: 1, MaxWait: math.MaxInt64}, "maxWait", "must be <= 1250h59m59.627370496s (4503599627370496 ns)"},
		{Config{Limit: int64(s), Window: s, Burst: math.MaxInt64 - int64(s)}, "burst", "must be <= 4503598627370496 "},
	} {
		_, err := New(tc.cfg, nil)
		require.Error(t, err, "%+v", tc.cfg)
		assert.Contains(t, err.Error(), tc.field+" "+tc.most, "%+v", tc.cfg)
	}
	for _, cfg := range []Config{
		{Limit: 2, Window: day, Burst: 102},
		{Limit: 1, Window: flow.MaxSpan},
		{Algorithm: LeakyBucket, Limit: 1, MaxWait: flow.MaxSpan},
		{Algorithm: Concurrency, Limit: math.MaxInt64},
	} {
		_, err := New(cfg, nil)
		assert.NoError(t, err, "%+v", cfg)
	}
}
