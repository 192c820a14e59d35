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

// TestEnterLazy checks that EnterLazy gathers params only for the rules
// that read them (a hotspot rule's Param, a Priority param), once, and
// not when WithParams gives them.
func TestEnterLazy(t *testing.T) {
	perUser := core.Rule{Name: "per-user", Resource: "GET /a", Kind: core.KindHotspot, Param: "user", Limit: 1, Window: time.Minute}
	byLevel := core.Rule{Name: "by-level", Resource: "GET /b", Kind: core.KindAdaptive, Priority: "level"}
	rate := core.Rule{Name: "rate", Resource: "GET /*", Kind: core.KindFlow, Limit: 100, Window: time.Minute}
	g, err := core.New(core.WithRules(perUser, byLevel, rate))
	require.NoError(t, err)
	defer g.Close()
	ctx := context.Background()
	for _, c := range []struct {
		resource string
		calls    int
	}{{"GET /a", 1}, {"GET /b", 1}, {"GET /c", 0}, {"other", 0}} {
		calls := 0
		e, err := g.EnterLazy(ctx, c.resource, func() core.Params {
			calls++
			return core.ParamMap{"user": {"u1"}, "level": {"critical"}}
		})
		require.NoError(t, err, c.resource)
		e.Exit(nil)
		assert.Equal(t, c.calls, calls, c.resource)
	}
	// u1 used its quota of 1 above: WithParams is read instead of params.
	e, err := g.EnterLazy(ctx, "GET /a", func() core.Params {
		t.Error("params called with WithParams")
		return nil
	}, core.WithParams(core.ParamMap{"user": {"u2"}}))
	require.NoError(t, err)
	e.Exit(nil)
	_, err = g.EnterLazy(ctx, "GET /a", func() core.Params { return core.ParamMap{"user": {"u1"}} })
	assert.ErrorIs(t, err, core.ErrBlocked, "u1's params were read")
}

// TestEnterLazyRulesReplaced checks that a request is decided by the rules
// that told whether to gather its params, even when SetRules replaces them
// in between: here while params runs (the rules then read no params).
// Asking the rules in force first and entering after would decide a
// request that arrives as rules reading params replace rules reading none
// without its params.
func TestEnterLazyRulesReplaced(t *testing.T) {
	perUser := core.Rule{Name: "per-user", Resource: "GET /a", Kind: core.KindHotspot, Param: "user", Limit: 1, Window: time.Minute, OnMissing: core.MissingReject}
	rate := core.Rule{Name: "rate", Resource: "GET /a", Kind: core.KindFlow, Limit: 100, Window: time.Minute}
	g, err := core.New(core.WithRules(perUser))
	require.NoError(t, err)
	defer g.Close()
	ctx := context.Background()
	u1 := func() core.Params { return core.ParamMap{"user": {"u1"}} }
	e, err := g.EnterLazy(ctx, "GET /a", u1)
	require.NoError(t, err)
	e.Exit(nil)
	_, err = g.EnterLazy(ctx, "GET /a", func() core.Params {
		require.NoError(t, g.SetRules([]core.Rule{rate}))
		return u1()
	})
	var b *core.BlockedError
	require.True(t, errors.As(err, &b), "decided by per-user, which read u1 (used up): %v", err)
	assert.Equal(t, "per-user", b.Rule)
	e, err = g.EnterLazy(ctx, "GET /a", func() core.Params {
		t.Error("params called for rules that read none")
		return nil
	})
	require.NoError(t, err, "the new rules decide the next request")
	e.Exit(nil)
}
