package core_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/breaker"
)

func TestDo(t *testing.T) {
	g, fc := newGuard(t,
		core.Rule{Name: "two", Resource: "inventory", Kind: core.KindFlow, Limit: 2, Window: time.Second},
		core.Rule{Name: "brk", Resource: "payments", Kind: core.KindBreaker, Strategy: breaker.ErrorCount, Threshold: 2,
			MinRequests: 1, Window: time.Second, OpenFor: time.Second},
	)
	ctx := context.Background()
	calls := 0
	fn := func(context.Context) error { calls++; return nil }
	require.NoError(t, g.Do(ctx, "inventory", fn))
	require.NoError(t, g.Do(ctx, "inventory", fn))
	err := g.Do(ctx, "inventory", fn)
	var b *core.BlockedError
	require.ErrorAs(t, err, &b)
	assert.Equal(t, "two", b.Rule)
	assert.Equal(t, 2, calls, "a blocked call does not run fn")

	// fn's errors, and panics, count as failures: two open the breaker.
	boom := errors.New("boom")
	assert.Same(t, boom, g.Do(ctx, "payments", func(context.Context) error { return boom }))
	assert.PanicsWithValue(t, "crash", func() {
		_ = g.Do(ctx, "payments", func(context.Context) error { panic("crash") })
	})
	st, ok := g.Stats("payments")
	require.True(t, ok)
	assert.Equal(t, int64(2), st.Error)
	assert.Zero(t, st.InFlight, "a panic exits too")
	err = g.Do(ctx, "payments", fn)
	require.ErrorAs(t, err, &b)
	assert.Equal(t, core.KindBreaker, b.Kind)
	fc.Advance(2 * time.Second)
	require.NoError(t, g.Do(ctx, "payments", fn), "the probe passes and closes the breaker")
}
