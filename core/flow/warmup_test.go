package flow

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// warmCfg is the brief's example: limit 90, cold factor 3, 10s of warm-up.
func warmCfg(alg Algorithm) Config {
	c := Config{Algorithm: alg, Limit: 90, Window: s, Warmup: 10 * s, ColdFactor: 3}
	if alg == LeakyBucket {
		c.MaxWait = s
	}
	return c
}

// traffic offers one request every `every` from `from` (inclusive) to `to`
// (exclusive) and returns the limit in force at each checkpoint reached and
// the admissions per whole second since from.
func traffic(l Limiter, from, to, every time.Duration, checkpoints []time.Duration) (limits map[time.Duration]int64, perSecond []int64) {
	limits = map[time.Duration]int64{}
	for at := from; at < to; at += every {
		d := l.Acquire(int64(at), 1)
		for _, c := range checkpoints {
			if at == c {
				limits[c] = d.Limit
			}
		}
		if i := int((at - from) / s); d.OK {
			for len(perSecond) <= i {
				perSecond = append(perSecond, 0)
			}
			perSecond[i]++
		}
	}
	return limits, perSecond
}

// TestWarmupRamp: under traffic above the limit the limit in force climbs
// from 90/3 to 90 over 10s, one step per window: 30 + 6 per second of heat.
// It holds for every algorithm, including the ones that admit a window's
// limit in a burst and then nothing for the rest of the window.
func TestWarmupRamp(t *testing.T) {
	const t0 = 100 * s
	want := map[time.Duration]int64{
		t0:                 30,
		t0 + 995*ms:        30,
		t0 + 1*s:           36,
		t0 + 2500*ms:       42,
		t0 + 5*s:           60, // half way
		t0 + 7500*ms:       72,
		t0 + 9990*ms:       84,
		t0 + 10*s:          90, // warm
		t0 + 11*s + 500*ms: 90, // and no further
	}
	var checkpoints []time.Duration
	for c := range want {
		checkpoints = append(checkpoints, c)
	}
	for _, alg := range Algorithms {
		t.Run(string(alg), func(t *testing.T) {
			l := mustNew(t, warmCfg(alg), nil)
			limits, perSecond := traffic(l, t0, t0+12*s, 5*ms, checkpoints) // 200/s offered
			assert.Equal(t, want, limits)
			if alg == TokenBucket || alg == LeakyBucket {
				return // a full bucket adds its capacity; a queue lags by MaxWait
			}
			// The window algorithms admit the limit in force each second
			// (the sliding ones a little more while it rises).
			assert.Equal(t, int64(30), perSecond[0], "first second, cold")
			assert.InDelta(t, 90, perSecond[11], 1, "twelfth second, warm")
			for i, n := range perSecond {
				assert.LessOrEqual(t, n, int64(90), "second %d", i)
			}
		})
	}
}

// TestWarmupCools: an idle rule, or one whose traffic is below half the cold
// limit (15/s here), cools down at the pace it warmed up.
func TestWarmupCools(t *testing.T) {
	const t0 = 100 * s
	l := mustNew(t, warmCfg(LeapArray), nil)
	traffic(l, t0, t0+10*s, 5*ms, nil)
	steps := []struct {
		name      string
		from, to  time.Duration
		every     time.Duration // 0: idle
		wantAtEnd int64         // limit of a request at `to`
	}{
		{"warm", t0 + 10*s, t0 + 11*s, 5 * ms, 90},
		{"idle 4s", t0 + 11*s, t0 + 15*s, 0, 66},
		{"busy 2s", t0 + 15*s, t0 + 17*s, 5 * ms, 78},
		{"10 per second: below 15", t0 + 17*s, t0 + 20*s, 100 * ms, 60},
		{"20 per second: above 15", t0 + 20*s, t0 + 22*s, 50 * ms, 72},
		{"idle for long", t0 + 22*s, t0 + time.Hour, 0, 30},
		{"cold stays cold when idle", t0 + time.Hour, t0 + 2*time.Hour, 0, 30},
	}
	for _, st := range steps {
		if st.every > 0 {
			traffic(l, st.from, st.to, st.every, nil)
		}
		d := l.Acquire(int64(st.to), 1)
		assert.Equal(t, st.wantAtEnd, d.Limit, st.name)
	}
}

// TestWarmupStartsCold: a new rule starts at Limit/ColdFactor, rounded down
// but at least 1, and a limit of 0 stays 0.
func TestWarmupStartsCold(t *testing.T) {
	tests := []struct {
		limit int64
		cold  int
		want  int64
	}{
		{90, 3, 30},
		{100, 3, 33},
		{2, 3, 1},
		{1, 10, 1},
		{10, 1, 10},
		{0, 3, 0},
	}
	for _, tt := range tests {
		l := mustNew(t, Config{Limit: tt.limit, Warmup: time.Minute, ColdFactor: tt.cold}, nil)
		assert.Equal(t, tt.want, l.Acquire(int64(s), 1).Limit, "limit %d cold factor %d", tt.limit, tt.cold)
	}
}

// TestWarmupReload: a reload keeps the heat, whatever the algorithm, and
// recomputes the limit in force from it.
func TestWarmupReload(t *testing.T) {
	const t0 = 100 * s
	prev := mustNew(t, warmCfg(LeapArray), nil)
	traffic(prev, t0, t0+5*s, 5*ms, nil) // heat 5s of 10s
	require.Equal(t, int64(60), prev.Acquire(int64(t0+5*s), 1).Limit)

	tests := []struct {
		name string
		cfg  Config
		want int64
	}{
		{"same rule", warmCfg(LeapArray), 60},
		{"other algorithm", warmCfg(TokenBucket), 60},
		{"limit raised", Config{Limit: 180, Warmup: 10 * s, ColdFactor: 3}, 120},              // 60 + 120*5/10
		{"longer warm-up", Config{Limit: 90, Warmup: 20 * s, ColdFactor: 3}, 45},              // 30 + 60*5/20
		{"shorter warm-up: heat capped", Config{Limit: 90, Warmup: 2 * s, ColdFactor: 3}, 90}, // warm
		{"warm-up removed", Config{Limit: 90}, 90},
	}
	for _, tt := range tests {
		next := mustNew(t, tt.cfg, prev)
		assert.Equal(t, tt.want, next.Acquire(int64(t0+5*s), 1).Limit, tt.name)
	}

	// A rule without warm-up that gains one starts cold.
	plain := mustNew(t, Config{Limit: 90}, nil)
	traffic(plain, t0, t0+5*s, 5*ms, nil)
	assert.Equal(t, int64(30), mustNew(t, warmCfg(LeapArray), plain).Acquire(int64(t0+5*s), 1).Limit)
}
