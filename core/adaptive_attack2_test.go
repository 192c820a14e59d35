package core_test

import (
	"context"
	"math"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/clock"
)

// TestAdaptiveHugeLimits gives an adaptive rule the largest limits a rules
// file takes. A Guard must refuse them, naming the field and its bound, or
// admit requests: a limit that converts to a negative number rejects them
// all.
func TestAdaptiveHugeLimits(t *testing.T) {
	for _, lim := range []int64{math.MaxInt64, 1 << 62} {
		fc := clock.NewFake(time.Hour)
		r := core.Rule{Name: "a", Resource: "GET /x", Kind: core.KindAdaptive, MinLimit: lim, MaxLimit: lim}
		g, err := core.New(core.WithClock(fc), core.WithRules(r))
		if err != nil {
			assert.ErrorContains(t, err, "Limit must be <= 4503599627370496, got "+strconv.FormatInt(lim, 10))
			continue
		}
		var held []core.Entry
		for i := range 100 {
			e, err := g.Enter(context.Background(), "GET /x")
			if !assert.NoError(t, err, "limit %d: request %d with 100 in flight", lim, i) {
				break
			}
			held = append(held, e)
			fc.Advance(time.Millisecond)
		}
		for _, e := range held {
			e.Exit(nil)
		}
		g.Close()
	}
}
