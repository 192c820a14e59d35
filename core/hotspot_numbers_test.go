package core_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/internal/flow"
)

// hotspotEnter makes one request of user on resource GET /x and reports
// whether it was admitted, with the retry hint of a rejection.
func hotspotEnter(t *testing.T, g *core.Guard, user string) (bool, time.Duration) {
	t.Helper()
	e, err := g.Enter(context.Background(), "GET /x", core.WithParams(core.ParamMap{"header:X-User-ID": {user}}))
	if err != nil {
		return false, blockedBy(t, err).RetryAfter
	}
	e.Exit(nil)
	return true, 0
}

// TestHotspotHighRateAdmitsTheLimit: a per-user token bucket of 600 per µs
// (1.67ns a request), and an override of 700 (1.43ns), given a request
// every nanosecond of the Guard's clock for 10µs once spent, admit 6000
// and 7000: exactly their rate. A leaky bucket that lets nobody wait
// admits a request only once its slot has begun, every second nanosecond
// at both rates: 5000. Before, a value's cost was rounded down to whole
// nanoseconds and all four admitted 10 000.
func TestHotspotHighRateAdmitsTheLimit(t *testing.T) {
	for alg, want := range map[string]map[string]int{
		"token-bucket": {"alice": 6000, "vip": 7000},
		"leaky-bucket": {"alice": 5000, "vip": 5000},
	} {
		t.Run(alg, func(t *testing.T) {
			g, fc := newGuard(t, core.Rule{
				Resource: "GET /x", Kind: core.KindHotspot, Param: "header:X-User-ID", Algorithm: core.Algorithm(alg),
				Limit: 600, Window: time.Microsecond, Overrides: map[string]int64{"vip": 700},
			})
			for user, want := range want {
				for ok, _ := hotspotEnter(t, g, user); ok; ok, _ = hotspotEnter(t, g, user) {
				}
				admitted := 0
				for range 10_000 {
					fc.Advance(1)
					if ok, _ := hotspotEnter(t, g, user); ok {
						admitted++
					}
				}
				assert.Equal(t, want, admitted, user)
			}
		})
	}
}

// TestHotspotRetryHintsExact: at 3 per second a token comes back every
// 333333333⅓ns; the hints are that time rounded up to the millisecond,
// never early: a client that waits as told is admitted, one that comes a
// nanosecond before the token is not.
func TestHotspotRetryHintsExact(t *testing.T) {
	g, fc := newGuard(t, core.Rule{
		Resource: "GET /x", Kind: core.KindHotspot, Param: "header:X-User-ID", Limit: 3, Window: time.Second,
	})
	for range 3 {
		ok, _ := hotspotEnter(t, g, "alice")
		require.True(t, ok)
	}
	for _, token := range []time.Duration{333333334, 333333333, 333333333, 333333334, 333333333, 333333333} {
		ok, retry := hotspotEnter(t, g, "alice")
		require.False(t, ok)
		require.Equal(t, 334*time.Millisecond, retry)
		fc.Advance(token - 1)
		ok, _ = hotspotEnter(t, g, "alice")
		require.False(t, ok, "a nanosecond early")
		fc.Advance(1)
		ok, _ = hotspotEnter(t, g, "alice")
		require.True(t, ok, "as told")
	}
}

// TestHotspotBoundsRefused: values a hotspot rule's buckets cannot honour
// are refused when the Guard is made, naming the rule, the field and the
// largest value allowed; the largest values are accepted and honoured.
func TestHotspotBoundsRefused(t *testing.T) {
	day := 24 * time.Hour
	rule := func(alg core.Algorithm, limit int64, window time.Duration, burst int64, maxWait time.Duration) core.Rule {
		return core.Rule{
			Name: "per-user", Resource: "GET /x", Kind: core.KindHotspot, Param: "header:X-User-ID",
			Algorithm: alg, Limit: limit, Window: window, Burst: burst, MaxWait: maxWait,
		}
	}
	maxBurst := int64(flow.MaxSpan-day) * 2 / int64(day) // a spent bucket fills within MaxSpan
	for _, tc := range []struct {
		rule  core.Rule
		field string
		most  string
	}{
		{rule("token-bucket", 2e9, time.Second, 0, 0), "limit", "1000000000"},
		{rule("token-bucket", 2, day, 1_000_000, 0), "burst", "102"},
		{rule("token-bucket", int64(time.Second), time.Second, math.MaxInt64-int64(time.Second), 0), "burst", "4503598627370496"},
		{rule("token-bucket", 1, math.MaxInt64, 0, 0), "window", "4503599627370496"},
		{rule("leaky-bucket", 1, time.Second, 0, math.MaxInt64), "maxWait", "4503599627370496"},
	} {
		_, err := core.New(core.WithRules(tc.rule))
		require.Error(t, err, "%+v", tc.rule)
		for _, s := range []string{"per-user", tc.field, tc.most} {
			assert.Contains(t, err.Error(), s, "%+v", tc.rule)
		}
	}
	require.EqualValues(t, 102, maxBurst)
	g, fc := newGuard(t, rule("token-bucket", 2, day, maxBurst, 0))
	admitted := 0
	for ok, _ := hotspotEnter(t, g, "alice"); ok; ok, _ = hotspotEnter(t, g, "alice") {
		admitted++
	}
	assert.EqualValues(t, 2+maxBurst, admitted, "the largest burst, whole")
	fc.Advance(day / 2)
	ok, _ := hotspotEnter(t, g, "alice")
	assert.True(t, ok, "refilled at 2 per day")
}
