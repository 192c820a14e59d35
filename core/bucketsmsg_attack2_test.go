package core_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/sluicekit/sluice/core"
)

// TestBucketsProblemSaysWhatIsAllowed: a window the default 10 buckets do
// not divide (a rule author's "window: 1ns" or "15ns") is refused with what
// the window may be; a window over the bound is one problem, not two.
// Failed before: the problem named no allowed value, and an oversized
// window was refused twice, once as a problem of buckets, which the rule
// did not set.
func TestBucketsProblemSaysWhatIsAllowed(t *testing.T) {
	for _, c := range []struct {
		r    core.Rule
		want string
	}{
		{core.Rule{Name: "f", Resource: "x", Kind: core.KindFlow, Algorithm: core.AlgorithmLeapArray, Limit: 1, Window: 15},
			"rules[0] (f): buckets window 15ns is not a whole number of nanoseconds per bucket with 10 buckets: the window must be a multiple of 10ns"},
		{core.Rule{Name: "b", Resource: "x", Kind: core.KindBreaker, Strategy: "error-count", Threshold: 1, Window: 15},
			"rules[0] (b): buckets window 15ns is not a whole number of nanoseconds per bucket with 10 buckets: the window must be a multiple of 10ns"},
		{core.Rule{Name: "f", Resource: "x", Kind: core.KindFlow, Algorithm: core.AlgorithmLeapArray, Limit: 1, Window: 1<<62 + 1},
			"rules[0] (f): window must be <= 1250h59m59.627370496s (4503599627370496 ns), got 1281023h53m38.427387905s"},
	} {
		_, err := core.NormalizeRules([]core.Rule{c.r})
		assert.EqualError(t, err, c.want)
	}
}
