package core

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core/clock"
	"github.com/sluicekit/sluice/core/store"
)

// countingStore is a store that counts the calls made to it.
type countingStore struct {
	store.Store
	calls atomic.Int64
}

func (c *countingStore) Take(ctx context.Context, key string, lim store.Limit, n int64) (store.Decision, error) {
	c.calls.Add(1)
	return c.Store.Take(ctx, key, lim, n)
}

func (c *countingStore) Undo(ctx context.Context, key string, lim store.Limit, d store.Decision, n int64) error {
	c.calls.Add(1)
	return c.Store.Undo(ctx, key, lim, d, n)
}

// TestSharedRulesNotAskedAfterRejection: once a rule in memory rejected a
// request, the rules after it kept in a shared store are not asked (a
// round trip per rejected request would let a flood that is rejected anyway
// load the store), for flow and hotspot rules; the rules in memory after it
// still are, and the hint is theirs.
func TestSharedRulesNotAskedAfterRejection(t *testing.T) {
	fc := clock.NewFake(time.Hour)
	m, err := store.NewMemory(fc, 0)
	require.NoError(t, err)
	cs := &countingStore{Store: m}
	g, err := New(WithClock(fc), WithStore("shared", cs), WithRules(
		Rule{Name: "gate", Resource: "r", Kind: KindFlow, Limit: 1, Window: time.Second},
		Rule{Name: "global", Resource: "r", Kind: KindFlow, Limit: 100, Store: "shared"},
		Rule{Name: "per-user", Resource: "r", Kind: KindHotspot, Param: "user", Limit: 100, Store: "shared"},
		Rule{Name: "local-user", Resource: "r", Kind: KindHotspot, Param: "user", Limit: 1, Window: time.Minute},
	))
	require.NoError(t, err)
	defer g.Close()
	ctx := context.Background()
	p := WithParams(ParamMap{"user": {"alice"}})
	e, err := g.Enter(ctx, "r", p)
	require.NoError(t, err)
	e.Exit(nil)
	asked := cs.calls.Load()
	require.Equal(t, int64(2), asked, "the first request asks both shared rules")
	for range 10 {
		_, err := g.Enter(ctx, "r", p)
		var be *BlockedError
		require.True(t, errors.As(err, &be), "%v", err)
		assert.Equal(t, "local-user", be.Rule, "the rule in memory after the rejection is asked: its hint is the latest")
		assert.Equal(t, time.Minute, be.RetryAfter)
	}
	assert.Equal(t, asked, cs.calls.Load(), "no call to the store after gate rejected")
}
