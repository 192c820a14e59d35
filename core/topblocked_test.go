package core_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/clock"
)

func TestTopBlockedValues(t *testing.T) {
	rule := core.Rule{Name: "per-user", Resource: "GET /items", Kind: core.KindHotspot, Param: "header:X-User-ID", Limit: 1, Window: time.Hour}
	type sent struct {
		user string
		n    int
	}
	send := func(g *core.Guard, users ...sent) {
		for _, u := range users {
			user := u.user
			for range u.n {
				e, err := g.Enter(context.Background(), "GET /items", core.WithParams(core.ParamMap{"header:X-User-ID": {user}}))
				if err == nil {
					e.Exit(nil)
				}
			}
		}
	}
	users := []sent{{"mallory", 10}, {"alice", 1}, {"eve", 5}}

	g, err := core.New(core.WithClock(clock.NewFake(time.Second)), quiet, core.WithRules(rule), core.WithTopBlockedValues(2))
	require.NoError(t, err)
	defer g.Close()
	send(g, users...)
	// Each user's first request passes.
	assert.Equal(t, []core.BlockedValue{{Value: "mallory", Blocked: 9}, {Value: "eve", Blocked: 4}}, ruleStats(t, g, "per-user").TopBlocked)
	// A reload keeps the counts (a longer window: mallory stays spent).
	rule.Window = 2 * time.Hour
	require.NoError(t, g.SetRules([]core.Rule{rule}))
	send(g, sent{"mallory", 1})
	assert.Equal(t, core.BlockedValue{Value: "mallory", Blocked: 10}, ruleStats(t, g, "per-user").TopBlocked[0])

	// Off by default.
	g2, err := core.New(core.WithClock(clock.NewFake(time.Second)), quiet, core.WithRules(rule))
	require.NoError(t, err)
	defer g2.Close()
	send(g2, users...)
	assert.Nil(t, ruleStats(t, g2, "per-user").TopBlocked)

	for _, k := range []int{0, 101} {
		_, err := core.New(core.WithTopBlockedValues(k))
		assert.ErrorContains(t, err, "WithTopBlockedValues")
		assert.ErrorContains(t, err, "between 1 and 100")
	}
}
