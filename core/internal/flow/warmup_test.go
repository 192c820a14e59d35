package flow

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// warmCfg is the brief's example: limit 90, cold factor 3, 10s of warm-up.
// Its store warns at 450 tokens and holds 900.
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

// perSec is the interval between requests offered at n per second.
func perSec(n int) time.Duration { return s / time.Duration(n) }

// spike is 200 requests per second, above the limit of warmCfg.
var spike = perSec(200)

// rampFromCold is the limit in force in each second of a spike on a cold
// warmCfg rule: the mean, over that second, of the continuous model's rate
// 90/sqrt(9-8u/10) at u seconds (modelRate), rounded.
var rampFromCold = []int64{31, 32, 34, 36, 39, 42, 46, 52, 61, 77, 90, 90}

// modelRate is the admitted rate of warmCfg, u into a full-rate spike from
// cold, in the continuous model (Guava's SmoothWarmingUp): the cost of a
// request falls from 3/90 s to 1/90 s as the square root of time.
func modelRate(u time.Duration) float64 {
	return 90 / math.Sqrt(9-8*min(float64(u)/float64(10*s), 1))
}

// TestWarmupRamp: under traffic above the limit, the limit in force climbs
// from about 90/3 to 90 in 10s along the model's curve, one step per window:
// slowly at first (the cost of a request falls linearly with the tokens
// used, which are few while the rule is cold) and steeply at the end. The
// store drains by what is admitted, so the ramp follows each algorithm's
// admissions: the window algorithms admit the limit in force each second
// (the sliding counter a little less while it rises, as it weighs the
// previous window), and a bucket admits its capacity on top in the first
// second (a full token bucket; a queue MaxWait long), so it warms a second
// earlier.
func TestWarmupRamp(t *testing.T) {
	const t0 = 100 * s
	early := []int64{31, 34, 36, 39, 42, 46, 52, 61, 76, 90, 90, 90}
	tests := []struct {
		alg       Algorithm
		limits    []int64 // limit in force at t0 + i seconds
		perSecond []int64 // admitted in second i
	}{
		{LeapArray, rampFromCold, rampFromCold},
		{FixedWindow, rampFromCold, rampFromCold},
		{SlidingLog, rampFromCold, rampFromCold},
		{SlidingCounter, []int64{31, 32, 34, 36, 39, 42, 46, 51, 59, 73, 89, 90}, []int64{31, 31, 33, 35, 38, 41, 45, 50, 58, 72, 88, 89}},
		{TokenBucket, early, []int64{61, 34, 36, 40, 42, 46, 52, 61, 76, 90, 90, 90}},
		{LeakyBucket, early, []int64{62, 34, 36, 39, 42, 46, 52, 61, 76, 90, 90, 90}},
	}
	for _, tt := range tests {
		t.Run(string(tt.alg), func(t *testing.T) {
			var checkpoints []time.Duration
			for i := range tt.limits {
				checkpoints = append(checkpoints, t0+time.Duration(i)*s)
			}
			checkpoints = append(checkpoints, t0+995*ms)
			l := mustNew(t, warmCfg(tt.alg), nil)
			limits, perSecond := traffic(l, t0, t0+time.Duration(len(tt.limits))*s, spike, checkpoints)
			for i, want := range tt.limits {
				assert.Equal(t, want, limits[t0+time.Duration(i)*s], "limit in second %d", i)
			}
			assert.Equal(t, tt.limits[0], limits[t0+995*ms], "one step per window")
			assert.Equal(t, tt.perSecond, perSecond, "admitted per second")
		})
	}
	// The ramp is the model's: the mean of its rate over a second lies
	// between its rates at the second's ends.
	for i, lim := range rampFromCold {
		at := time.Duration(i) * s
		assert.GreaterOrEqual(t, float64(lim), math.Floor(modelRate(at)), "second %d", i)
		assert.LessOrEqual(t, float64(lim), math.Ceil(modelRate(at+s)), "second %d", i)
	}
}

// TestWarmupIdleThenSpike is the scenario: a service idles for a
// while, then a spike at full rate arrives. Whether it idled at 0%, 20% or
// 30% of its limit (below the cold limit, 90/3 per second), the spike is
// ramped from cold. (The first model counted a rule as warm once traffic
// passed 1/6 of its limit: after idling at 20% or 30%, the spike got 90 from
// its first second.)
func TestWarmupIdleThenSpike(t *testing.T) {
	const t0 = 100 * s
	tests := []struct {
		name   string
		warm   bool          // the rule was warm (a minute at full rate) before idling
		every  time.Duration // idle traffic; 0: none
		idle   time.Duration
		wantAt []int64 // limit 0, 2.5, 5, 7.5 and 10s into the spike
	}{
		{"cold, no traffic", false, 0, time.Minute, []int64{31, 34, 42, 52, 90}},
		{"cold, 10% for a minute", false, perSec(9), time.Minute, []int64{31, 34, 42, 52, 90}},
		{"cold, 20% for a minute", false, perSec(18), time.Minute, []int64{31, 36, 42, 62, 90}},
		{"cold, 30% for a minute", false, perSec(27), time.Minute, []int64{31, 36, 42, 62, 90}},
		{"warm, then no traffic for 6s", true, 0, 6 * s, []int64{31, 34, 42, 52, 90}},
		{"warm, then 20% for 9s", true, perSec(18), 9 * s, []int64{31, 37, 43, 64, 90}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := mustNew(t, warmCfg(LeapArray), nil)
			start := t0
			if tt.warm {
				traffic(l, start, start+time.Minute, spike, nil)
				start += time.Minute
				require.Equal(t, int64(90), l.Acquire(int64(start), 1).Limit, "warm")
			}
			if tt.every > 0 {
				traffic(l, start, start+tt.idle, tt.every, nil)
			}
			start += tt.idle
			var checkpoints []time.Duration
			for i := range tt.wantAt {
				checkpoints = append(checkpoints, start+time.Duration(i)*2500*ms)
			}
			limits, perSecond := traffic(l, start, start+11*s, spike, checkpoints)
			for i, c := range checkpoints {
				assert.Equal(t, tt.wantAt[i], limits[c], "limit %s into the spike", c-start)
			}
			assert.LessOrEqual(t, perSecond[0], int64(32), "admitted in the spike's first second")
			assert.Equal(t, int64(90), perSecond[10], "admitted in the spike's eleventh second")
		})
	}
}

// TestWarmupSustainedTraffic: from cold, traffic below the cold limit (30
// per second) leaves the rule cold however long it runs; traffic above it
// uses the store up and the rule settles warm, sooner the nearer the limit
// (as Sentinel's). Runs 60s, then reads the limit.
func TestWarmupSustainedTraffic(t *testing.T) {
	const t0 = 100 * s
	tests := []struct {
		name  string
		every time.Duration
		warm  time.Duration // when the limit in force first reaches 90; 0: never
	}{
		{"20%", perSec(18), 0},
		{"30%", perSec(27), 0},
		{"40%: slowly uses the store", perSec(36), 13 * s},
		{"60%", perSec(54), 11 * s},
		{"90%", perSec(81), 10 * s},
		{"at the limit", perSec(90), 10 * s},
		{"above the limit", spike, 10 * s},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := mustNew(t, warmCfg(LeapArray), nil)
			var warmAt time.Duration
			for at := t0; at < t0+time.Minute; at += tt.every {
				if d := l.Acquire(int64(at), 1); d.Limit == 90 && warmAt == 0 {
					warmAt = at - t0
				}
			}
			end := l.Acquire(int64(t0+time.Minute), 1).Limit
			if tt.warm == 0 {
				assert.Zero(t, warmAt, "warm at")
				assert.Equal(t, int64(31), end, "still cold")
				return
			}
			assert.Equal(t, tt.warm, warmAt.Truncate(s), "warm at")
			assert.Equal(t, int64(90), end, "warm")
		})
	}
}

// TestWarmupCools: a warm rule that runs below the cold limit (30 per
// second) fills its store with what it leaves unused, from about the warning
// level (450; a saturated rule sits up to one window's use below it) to the
// top (900): idle, it is cold 6s later; at 30% of its limit, 10s later.
// Nothing colder than cold: at the top the limit stays 31.
func TestWarmupCools(t *testing.T) {
	const t0 = 100 * s
	tests := []struct {
		name  string
		every time.Duration // 0: idle
		want  []int64       // limit in force 0, 1, ... 11s after the spike
	}{
		{"idle", 0, []int64{90, 90, 73, 54, 43, 36, 31, 31, 31, 31, 31, 31}},
		{"10%", perSec(9), []int64{90, 90, 80, 59, 47, 40, 34, 31, 31, 31, 31, 31}},
		{"20%", perSec(18), []int64{90, 90, 84, 65, 52, 44, 38, 33, 31, 31, 31, 31}},
		{"30%", perSec(27), []int64{90, 90, 88, 72, 58, 49, 42, 37, 33, 31, 31, 31}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := mustNew(t, warmCfg(LeapArray), nil)
			traffic(l, t0, t0+time.Minute, spike, nil)
			t1 := t0 + time.Minute
			var got []int64
			for i := range tt.want {
				at := t1 + time.Duration(i)*s
				if tt.every > 0 && i > 0 {
					traffic(l, at-s, at, tt.every, nil)
				}
				got = append(got, l.Acquire(int64(at), 1).Limit)
			}
			assert.Equal(t, tt.want, got)
			assert.Equal(t, int64(31), l.Acquire(int64(t1+time.Hour), 1).Limit, "an hour later")
		})
	}
}

// TestWarmupStartsCold: a new rule starts near Limit/ColdFactor (the mean
// over its first window of a ramp that rises from there), at least 1, and
// a limit of 0 stays 0.
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

// TestWarmupReload: a reload keeps how full the store is, as a share of what
// it holds, whatever the algorithm, and recomputes the limit in force from
// it; a rule that gains a warm-up starts cold.
func TestWarmupReload(t *testing.T) {
	const t0 = 100 * s
	prev := mustNew(t, warmCfg(LeapArray), nil)
	traffic(prev, t0, t0+5*s, spike, nil) // 5s of 10s into the ramp
	require.Equal(t, int64(42), prev.Acquire(int64(t0+5*s), 1).Limit)

	tests := []struct {
		name string
		cfg  Config
		want int64
	}{
		{"same rule", warmCfg(LeapArray), 42},
		{"other algorithm", warmCfg(TokenBucket), 42},
		{"limit raised", Config{Limit: 180, Warmup: 10 * s, ColdFactor: 3}, 84},
		{"longer warm-up", Config{Limit: 90, Warmup: 20 * s, ColdFactor: 3}, 41},
		{"shorter warm-up", Config{Limit: 90, Warmup: 2 * s, ColdFactor: 3}, 56}, // the mean over a window, half the warm-up
		{"colder", Config{Limit: 90, Warmup: 10 * s, ColdFactor: 5}, 26},
		{"warm-up removed", Config{Limit: 90}, 90},
	}
	for _, tt := range tests {
		next := mustNew(t, tt.cfg, prev)
		assert.Equal(t, tt.want, next.Acquire(int64(t0+5*s), 1).Limit, tt.name)
	}

	// A rule without warm-up that gains one starts cold.
	plain := mustNew(t, Config{Limit: 90}, nil)
	traffic(plain, t0, t0+5*s, spike, nil)
	assert.Equal(t, int64(31), mustNew(t, warmCfg(LeapArray), plain).Acquire(int64(t0+5*s), 1).Limit)
}

// TestWarmupUndoneDoesNotWarm: requests admitted and then given back (Undo:
// another rule rejected them, or their wait was cancelled) are no traffic
// for the warm-up: a full-rate spike that every time is given back leaves
// the rule cold, while the same spike kept warms it in 10s.
func TestWarmupUndoneDoesNotWarm(t *testing.T) {
	const t0 = 100 * s
	for _, alg := range []Algorithm{LeapArray, FixedWindow, SlidingLog, SlidingCounter, TokenBucket, LeakyBucket} {
		t.Run(string(alg), func(t *testing.T) {
			for _, undo := range []bool{false, true} {
				l := mustNew(t, warmCfg(alg), nil)
				for at := t0; at < t0+30*s; at += spike {
					if d := l.Acquire(int64(at), 1); d.OK && undo {
						l.Undo(d, 1)
					}
				}
				lim := l.Acquire(int64(t0+30*s), 1).Limit
				if undo {
					assert.Less(t, lim, int64(40), "every admission given back: still cold")
				} else {
					assert.Equal(t, int64(90), lim, "admissions kept: warm")
				}
			}
		})
	}
}
