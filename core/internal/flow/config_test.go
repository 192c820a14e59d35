package flow

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWithDefaults(t *testing.T) {
	tests := []struct {
		in, want Config
	}{
		{Config{}, Config{Algorithm: LeapArray, Window: time.Second, Buckets: 10}},
		{Config{Algorithm: TokenBucket, Limit: 5}, Config{Algorithm: TokenBucket, Limit: 5, Window: time.Second}},
		{Config{Warmup: time.Second}, Config{Algorithm: LeapArray, Window: time.Second, Buckets: 10, Warmup: time.Second, ColdFactor: 3}},
		{Config{Window: 2 * time.Second, Buckets: 4, Warmup: time.Second, ColdFactor: 5}, Config{Algorithm: LeapArray, Window: 2 * time.Second, Buckets: 4, Warmup: time.Second, ColdFactor: 5}},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, tt.in.WithDefaults(), "%+v", tt.in)
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name   string
		cfg    Config
		fields []string // of the FieldErrors, in order
		msg    string   // part of the first error's text
	}{
		{"zero value: all defaults", Config{}, nil, ""},
		{"every algorithm", Config{Algorithm: SlidingLog, Limit: MaxSlidingLogLimit}, nil, ""},
		{"token bucket", Config{Algorithm: TokenBucket, Limit: 10, Burst: 5}, nil, ""},
		{"leaky bucket", Config{Algorithm: LeakyBucket, Limit: int64(time.Second), MaxWait: time.Second}, nil, ""},
		{"warm-up", Config{Limit: 10, Warmup: time.Minute, ColdFactor: 1}, nil, ""},
		{"unknown algorithm", Config{Algorithm: "gcra"}, []string{"algorithm"}, `algorithm unknown algorithm "gcra"`},
		{"negative limit", Config{Limit: -5}, []string{"limit"}, "limit must be >= 0, got -5"},
		{"negative window", Config{Window: -time.Second}, []string{"window"}, "window must be > 0, got -1s"},
		{"negative buckets", Config{Buckets: -1}, []string{"buckets"}, "between 1 and 1000, got -1"},
		{"too many buckets", Config{Buckets: MaxBuckets + 1}, []string{"buckets"}, "got 1001"},
		{"window not divisible", Config{Window: time.Second, Buckets: 7}, []string{"buckets"}, "not a whole number of nanoseconds"},
		{"buckets without leap array", Config{Algorithm: FixedWindow, Buckets: 10}, []string{"buckets"}, "only applies to algorithm leap-array"},
		{"negative burst", Config{Algorithm: TokenBucket, Burst: -1}, []string{"burst"}, "burst must be >= 0"},
		{"burst without token bucket", Config{Burst: 3}, []string{"burst"}, "only applies to algorithm token-bucket"},
		{"negative maxWait", Config{Algorithm: LeakyBucket, MaxWait: -1}, []string{"maxWait"}, "maxWait must be >= 0"},
		{"maxWait without leaky bucket", Config{Algorithm: TokenBucket, MaxWait: time.Second}, []string{"maxWait"}, "only applies to algorithm leaky-bucket"},
		{"sliding log too large", Config{Algorithm: SlidingLog, Limit: MaxSlidingLogLimit + 1}, []string{"limit"}, "must be <= 1048576"},
		{"token bucket above 1/ns", Config{Algorithm: TokenBucket, Limit: 2, Window: 1}, []string{"limit"}, "one request per nanosecond"},
		{"leaky bucket above 1/ns", Config{Algorithm: LeakyBucket, Limit: int64(time.Second) + 1}, []string{"limit"}, "one request per nanosecond"},
		{"negative warm-up", Config{Warmup: -time.Second}, []string{"warmup"}, "warmup must be >= 0"},
		{"negative cold factor", Config{Warmup: time.Second, ColdFactor: -1}, []string{"coldFactor"}, "coldFactor must be >= 1, got -1"},
		{"cold factor without warm-up", Config{ColdFactor: 3}, []string{"coldFactor"}, "only applies with warmup > 0"},
		{
			"every problem reported",
			Config{Algorithm: FixedWindow, Limit: -1, Window: -1, Buckets: 3, Burst: 1, MaxWait: -1, Warmup: -1, ColdFactor: -2},
			[]string{"limit", "window", "buckets", "burst", "maxWait", "warmup", "coldFactor"},
			"limit must be >= 0",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errs := tt.cfg.Validate()
			var fields []string
			for _, e := range errs {
				fields = append(fields, e.Field)
			}
			assert.Equal(t, tt.fields, fields)
			l, err := New(tt.cfg, nil)
			if tt.fields == nil {
				require.NoError(t, err)
				assert.Equal(t, tt.cfg.WithDefaults(), l.Config())
				return
			}
			assert.Contains(t, errs[0].Error(), tt.msg)
			// New reports the same problems, every one of them.
			require.Error(t, err)
			assert.Nil(t, l)
			for _, e := range errs {
				assert.ErrorContains(t, err, e.Error())
			}
		})
	}
}

func TestFieldErrorText(t *testing.T) {
	e := &FieldError{Field: "limit", Msg: "must be >= 0, got -5"}
	assert.Equal(t, "limit must be >= 0, got -5", e.Error())
}
