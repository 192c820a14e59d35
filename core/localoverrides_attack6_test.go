package core_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/clock"
	"github.com/sluicekit/sluice/core/store"
)

// TestFallbackScalesOverridesToTheLocalShare: while its store fails, a
// hotspot rule limits each value on its own, at LocalLimit, this
// instance's share of Limit. Its overrides kept their whole values: with
// limit 100, localLimit 10 (ten instances) and a vip override of 1000, each
// instance admitted the vip 1000 requests a window, ten times the limit
// across the fleet, while every other user got the share. An override
// now gets the same share: 100 here; 0 still blocks.
func TestFallbackScalesOverridesToTheLocalShare(t *testing.T) {
	fc := clock.NewFake(time.Hour)
	m, err := store.NewMemory(fc, 1) // one key: the first rule's
	require.NoError(t, err)
	g, err := core.New(core.WithClock(fc), core.WithStore("m", m), core.WithRules(
		core.Rule{Name: "first", Resource: "a", Kind: core.KindFlow, Limit: 10, Window: time.Minute, Store: "m"},
		core.Rule{Name: "per-user", Resource: "b", Kind: core.KindHotspot, Param: "header:u", Limit: 100, Window: time.Minute,
			Store: "m", LocalLimit: 10, Overrides: map[string]int64{"vip": 1000, "slow": 5, "banned": 0}},
	))
	require.NoError(t, err)
	defer g.Close()
	ctx := context.Background()
	e, err := g.Enter(ctx, "a")
	require.NoError(t, err)
	e.Exit(nil)

	admitted := func(user string) int {
		n := 0
		for range 2000 {
			e, err := g.Enter(ctx, "b", core.WithParams(core.ParamMap{"header:u": {user}}))
			if err != nil {
				var b *core.BlockedError
				require.ErrorAs(t, err, &b)
				require.True(t, b.Fallback || user == "banned", "the store cannot keep the value's key")
				break
			}
			e.Exit(nil)
			n++
		}
		return n
	}
	assert.Equal(t, 10, admitted("alice"), "localLimit")
	assert.Equal(t, 100, admitted("vip"), "1000 of 100, scaled to 10 of 100")
	assert.Equal(t, 1, admitted("slow"), "5 of 100, scaled to 0.5 of 10: at least one")
	assert.Equal(t, 0, admitted("banned"))
}
