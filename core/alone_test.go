package core_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core"
)

// TestAloneAsWithOthers: a flow or concurrency rule alone on its resource,
// which decides requests by itself (lone.decide), decides as it does
// with another rule that admits everything: the same admissions, quota
// policies, errors and statistics.
func TestAloneAsWithOthers(t *testing.T) {
	roomy := core.Rule{Name: "roomy", Resource: "r", Kind: core.KindConcurrency, Limit: 1000}
	for _, r := range []core.Rule{
		{Name: "rate", Resource: "r", Kind: core.KindFlow, Limit: 2, Window: time.Second},
		{Name: "bucket", Resource: "r", Kind: core.KindFlow, Algorithm: core.AlgorithmTokenBucket, Limit: 2, Window: time.Second},
		{Name: "inflight", Resource: "r", Kind: core.KindConcurrency, Limit: 2},
	} {
		type outcome struct {
			Errors                  []string
			Blocked                 []core.BlockedError
			Quotas                  [][]core.Quota
			BlockedTotal, Evaluated int64
		}
		run := func(rules ...core.Rule) outcome {
			g, fc := quietGuard(t, rules...)
			ctx := context.Background()
			var o outcome
			var held []core.Entry
			for i := range 5 {
				var qs []core.Quota
				e, err := g.Enter(ctx, "r", core.WithQuotas(&qs), core.WithCount(int64(1+i%2)))
				o.Quotas = append(o.Quotas, qs)
				if b := (*core.BlockedError)(nil); errors.As(err, &b) {
					o.Blocked = append(o.Blocked, *b)
				} else if err != nil {
					o.Errors = append(o.Errors, err.Error())
				}
				held = append(held, e)
				fc.Advance(100 * time.Millisecond)
			}
			for _, e := range held {
				e.Exit(nil)
			}
			st := ruleStats(t, g, r.Name)
			o.BlockedTotal, o.Evaluated = st.BlockedTotal, st.Evaluated
			return o
		}
		alone, with := run(r), run(r, roomy)
		require.NotEmpty(t, alone.Blocked, "%s blocks some", r.Name)
		assert.Equal(t, alone, with, r.Name)
	}
}
