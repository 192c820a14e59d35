package core

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core/clock"
)

// TestEnterOptionsTogether: WithCount, WithParams and WithQuotas given
// together in any order each do their part (a count option carries no
// params, a params option no count), and the last WithCount wins.
func TestEnterOptionsTogether(t *testing.T) {
	g, err := New(WithClock(clock.NewFake(0)), WithRules(Rule{Resource: "r", Kind: KindHotspot,
		Param: "header:X-User", Limit: 3, Window: time.Hour}))
	require.NoError(t, err)
	ctx := context.Background()
	user := func(v string) EnterOption { return WithParams(ParamMap{"header:X-User": {v}}) }
	enter := func(opts ...EnterOption) error {
		e, err := g.Enter(ctx, "r", opts...)
		e.Exit(nil)
		return err
	}
	require.NoError(t, enter(user("a"), WithCount(2)), "a: 2 of 3")
	assert.ErrorIs(t, enter(WithCount(2), user("a")), ErrBlocked, "a: 1 left, 2 asked")
	require.NoError(t, enter(WithCount(1), user("b"), WithCount(3)), "b: the last count, 3 of 3")
	assert.ErrorIs(t, enter(user("b")), ErrBlocked, "b: none left")
	err = enter(user("a"), WithCount(0))
	require.Error(t, err)
	assert.False(t, errors.Is(err, ErrBlocked))
	assert.Contains(t, err.Error(), "count must be >= 1, got 0")
	var qs []Quota
	require.NoError(t, enter(WithQuotas(&qs), user("a"), WithCount(1)), "a: its last one")
	require.Len(t, qs, 1)
	assert.Equal(t, int64(0), qs[0].Remaining)
	assert.ErrorIs(t, enter(user("a")), ErrBlocked, "a: none left")
	require.NoError(t, enter(user("c"), WithCount(3)), "c: its own 3")
}
