package core_test

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/clock"
	"github.com/sluicekit/sluice/core/store"
)

// TestLocalLimitOutOfBounds gives store rules a localLimit the local
// limiter cannot take. The problem must name localLimit (not limit, which
// is valid) with its value and bound, and be found by NormalizeRules, which
// rules files and sluicecheck use, not only by New.
//
// Failed before localLimit was bounded where it is validated: NormalizeRules
// took these rules, and New refused them with "limit must be <= ...", the
// localLimit's value under the name of a field the operator set right.
func TestLocalLimitOutOfBounds(t *testing.T) {
	ms, err := store.NewMemory(clock.NewFake(time.Hour), 100)
	require.NoError(t, err)
	for _, c := range []struct {
		r    core.Rule
		want string
	}{
		{core.Rule{Name: "a", Resource: "GET /x", Kind: core.KindFlow, Limit: 10, Store: "m", LocalLimit: math.MaxInt64},
			"rules[0] (a): localLimit must be <= 4503599627370496, got 9223372036854775807"},
		{core.Rule{Name: "a", Resource: "GET /x", Kind: core.KindFlow, Algorithm: core.AlgorithmTokenBucket, Limit: 10, Store: "m", LocalLimit: 2e9},
			"rules[0] (a): localLimit must be <= 1000000000 (one request per nanosecond) with window 1s, got 2000000000"},
		{core.Rule{Name: "a", Resource: "GET /x", Kind: core.KindHotspot, Param: "header:X-User", Limit: 10, Store: "m", LocalLimit: 1 << 62},
			"rules[0] (a): localLimit must be <= 4503599627370496, got 4611686018427387904"},
	} {
		_, err := core.NormalizeRules([]core.Rule{c.r})
		assert.ErrorContains(t, err, c.want, "NormalizeRules")
		_, err = core.New(core.WithStore("m", ms), core.WithRules(c.r))
		assert.ErrorContains(t, err, c.want, "New")
	}
}
