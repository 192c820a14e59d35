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

type ctxKey struct{}

func TestBlockHook(t *testing.T) {
	var got []string
	hook := func(ctx context.Context, b *core.BlockedError) {
		got = append(got, ctx.Value(ctxKey{}).(string)+" "+b.Rule+" "+b.Reason())
	}
	g, err := core.New(core.WithClock(clock.NewFake(0)), core.WithBlockHook(hook), core.WithBlockHook(hook),
		core.WithRules(core.Rule{Name: "one", Resource: "r", Kind: core.KindFlow, Limit: 1, Window: time.Second}))
	require.NoError(t, err)
	defer g.Close()
	ctx := context.WithValue(context.Background(), ctxKey{}, "req")
	e, err := g.Enter(ctx, "r")
	require.NoError(t, err)
	e.Exit(nil)
	assert.Empty(t, got, "a request that passes calls no hook")
	_, err = g.Enter(ctx, "r")
	require.Error(t, err)
	assert.Equal(t, []string{"req one flow", "req one flow"}, got, "every hook, with the request's context")

	_, err = core.New(core.WithBlockHook(nil))
	assert.ErrorContains(t, err, "WithBlockHook: hook is nil")
}
