package core_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/clock"
)

// TestReloadKindUnderSameName holds a request admitted by a rule of one
// request in flight (or per window), reloads a rule of the same name but
// another kind, algorithm or resource (and, for "and back", the first one
// again), then ends the held request: the rule then in force admits at
// most one of three requests. An Exit that gave its slot back to a limiter
// that never counted it would let two or three through.
func TestReloadKindUnderSameName(t *testing.T) {
	p := core.WithParams(core.ParamMap{"method": {"GET"}})
	rules := []core.Rule{
		{Name: "c", Resource: "GET /x", Kind: core.KindConcurrency, Limit: 1},
		{Name: "c", Resource: "GET /x", Kind: core.KindAdaptive, MinLimit: 1, MaxLimit: 1},
		{Name: "c", Resource: "GET /x", Kind: core.KindHotspot, Algorithm: core.AlgorithmConcurrency, Param: "method", Limit: 1},
		{Name: "c", Resource: "GET /*", Kind: core.KindConcurrency, Limit: 1},
		{Name: "c", Resource: "GET /x", Kind: core.KindSystem, Signal: "inflight", Threshold: 1},
		{Name: "c", Resource: "GET /x", Kind: core.KindFlow, Limit: 1, Window: time.Hour},
		{Name: "c", Resource: "GET /x", Kind: core.KindFlow, Algorithm: core.AlgorithmLeakyBucket, Limit: 1, Window: time.Hour},
		{Name: "c", Resource: "GET /x", Kind: core.KindHotspot, Param: "method", Limit: 1, Window: time.Hour},
	}
	name := func(r core.Rule) string { return fmt.Sprintf("%s/%s/%s", r.Kind, r.Algorithm, r.Resource) }
	for _, first := range rules {
		for _, mid := range rules {
			for _, back := range []bool{false, true} {
				g, err := core.New(core.WithClock(clock.NewFake(time.Hour)), core.WithRules(first))
				require.NoError(t, err)
				ctx := context.Background()
				held, err := g.Enter(ctx, "GET /x", p)
				require.NoError(t, err)
				require.NoError(t, g.SetRules([]core.Rule{mid}))
				if back {
					require.NoError(t, g.SetRules([]core.Rule{first}))
				}
				held.Exit(nil)
				n := 0
				for range 3 {
					if _, err := g.Enter(ctx, "GET /x", p); err == nil {
						n++
					}
				}
				assert.LessOrEqual(t, n, 1, "%s to %s (and back: %v)", name(first), name(mid), back)
				g.Close()
			}
		}
	}
}
