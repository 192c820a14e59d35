package hotspot

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core/internal/flow"
)

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		want []string // the errors, field first, in order
	}{
		{"defaults", Config{}, nil},
		{"every algorithm", Config{Algorithm: Concurrency, Limit: 5, MaxKeys: 10}, nil},
		{"unknown algorithm", Config{Algorithm: "sliding-log", Limit: 1},
			[]string{`algorithm unknown algorithm "sliding-log" (want one of [token-bucket leaky-bucket concurrency])`}},
		{"negative limit", Config{Limit: -5}, []string{"limit must be >= 0, got -5"}},
		{"limit above one per nanosecond", Config{Limit: 2000, Window: time.Microsecond},
			[]string{"limit must be <= 1000 (one request per nanosecond) with window 1µs, got 2000"}},
		{"concurrency has no rate", Config{Algorithm: Concurrency, Limit: 2000, Window: time.Microsecond},
			[]string{"window does not apply to algorithm concurrency, got 1µs"}},
		{"negative window", Config{Limit: 1, Window: -time.Second}, []string{"window must be > 0, got -1s"}},
		{"negative burst", Config{Burst: -1}, []string{"burst must be >= 0, got -1"}},
		{"burst of a leaky bucket", Config{Algorithm: LeakyBucket, Burst: 2},
			[]string{"burst only applies to algorithm token-bucket, got 2 with leaky-bucket"}},
		{"negative maxWait", Config{Algorithm: LeakyBucket, MaxWait: -time.Second}, []string{"maxWait must be >= 0, got -1s"}},
		{"maxWait of a token bucket", Config{MaxWait: time.Second},
			[]string{"maxWait only applies to algorithm leaky-bucket, got 1s with token-bucket"}},
		{"negative maxKeys", Config{MaxKeys: -1}, []string{"maxKeys must be >= 0, got -1"}},
		{"too many keys", Config{MaxKeys: MaxMaxKeys + 1}, []string{"maxKeys must be <= 1073741824, got 1073741825"}},
		{"overrides", Config{Limit: 1, Window: time.Microsecond, Overrides: map[string]int64{"b": -1, "a": 5000, "ok": 0}},
			[]string{
				`overrides value for "a" must be <= 1000 (one request per nanosecond) with window 1µs, got 5000`,
				`overrides value for "b" must be >= 0, got -1`,
			}},
		{"everything at once", Config{Algorithm: Concurrency, Limit: -1, Window: time.Second, Burst: 1, MaxWait: 1, MaxKeys: -1},
			[]string{
				"limit must be >= 0, got -1",
				"window does not apply to algorithm concurrency, got 1s",
				"burst only applies to algorithm token-bucket, got 1 with concurrency",
				"maxWait only applies to algorithm leaky-bucket, got 1ns with concurrency",
				"maxKeys must be >= 0, got -1",
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, e := range tc.cfg.Validate() {
				got = append(got, e.Error())
			}
			assert.Equal(t, tc.want, got)

			l, err := New(tc.cfg, nil)
			if tc.want == nil {
				require.NoError(t, err)
				assert.NotNil(t, l)
				return
			}
			require.Error(t, err)
			assert.Nil(t, l)
			var fe *flow.FieldError
			require.True(t, errors.As(err, &fe), "a flow.FieldError names the field")
			for _, w := range tc.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
}

func TestDefaults(t *testing.T) {
	l := mustNew(t, Config{Limit: 3}, nil)
	assert.Equal(t, Config{Algorithm: TokenBucket, Limit: 3, Window: DefaultWindow, MaxKeys: DefaultMaxKeys}, l.Config())
	c := mustNew(t, Config{Algorithm: Concurrency, Limit: 3}, nil)
	assert.Zero(t, c.Config().Window, "concurrency has no window")

	// The Limiter keeps its own copy of the overrides.
	overrides := map[string]int64{"vip": 2}
	o := mustNew(t, Config{Limit: 1, Overrides: overrides}, nil)
	overrides["vip"] = 0
	assert.True(t, o.Acquire(0, "vip", 2).OK)
	o.Config().Overrides["vip"] = 0
	assert.True(t, o.Acquire(int64(time.Second), "vip", 2).OK)
}
