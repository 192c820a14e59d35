package core

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestStoreBucketLimits: a bucket in a store counts whole nanoseconds per
// request, rounded up; a limit whose rounding would lose a request per
// window is refused with the largest allowed, for the rule's limit and each
// override, unless it divides the window.
func TestStoreBucketLimits(t *testing.T) {
	rule := func(kind Kind, alg Algorithm, limit int64, overrides map[string]int64) Rule {
		r := Rule{Name: "r", Resource: "GET /x", Kind: kind, Algorithm: alg, Limit: limit, Store: "redis", Overrides: overrides}
		if kind == KindHotspot {
			r.Param = "ip"
		}
		return r
	}
	for _, tc := range []struct {
		r    Rule
		want string // "" when accepted
	}{
		{rule(KindFlow, "token-bucket", 31622, nil), ""},      // 31622^2 <= 1e9
		{rule(KindFlow, "token-bucket", 250_000, nil), ""},    // divides 1s: 4000ns each
		{rule(KindFlow, "sliding-counter", 300_001, nil), ""}, // counts, not nanoseconds
		{rule(KindFlow, "token-bucket", 31623, nil), `rules[0] (r): limit must be <= 31622 with a store and a window of 1s, or divide the window's 1000000000 nanoseconds (a bucket in a store counts whole nanoseconds per request), got 31623`},
		{rule(KindFlow, "leaky-bucket", 300_001, nil), "limit must be <= 31622 with a store and a window of 1s"},
		{rule(KindHotspot, "", 10, map[string]int64{"10.0.0.1": 300_001, "10.0.0.2": 500_000}), `rules[0] (r): overrides value "10.0.0.1": must be <= 31622 with a store and a window of 1s`},
	} {
		err := checkRules([]Rule{tc.r})
		if tc.want == "" {
			assert.NoError(t, err, "%+v", tc.r)
			continue
		}
		require.Error(t, err, "%+v", tc.r)
		assert.Contains(t, err.Error(), tc.want)
	}
}
