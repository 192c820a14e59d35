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
	"github.com/sluicekit/sluice/core/store"
)

func TestHotspotLimitsEachValue(t *testing.T) {
	g, fc := newGuard(t, core.Rule{
		Name: "per-user", Resource: "GET /items/{id}", Kind: core.KindHotspot,
		Param: "header:X-User-ID", Limit: 2, Burst: 1,
		Overrides: map[string]int64{"vip": 10, "abuser": 0},
	})
	ctx := context.Background()
	enter := func(user ...string) error {
		var opts []core.EnterOption
		if user != nil {
			opts = append(opts, core.WithParams(core.ParamMap{"header:X-User-ID": user}))
		}
		e, err := g.Enter(ctx, "GET /items/{id}", opts...)
		e.Exit(nil)
		return err
	}
	for _, tc := range []struct {
		user string
		pass int // admitted of a burst at one instant
	}{
		{"alice", 3}, // limit 2 + burst 1
		{"bob", 3},   // alice's use does not count for bob
		{"vip", 11},  // override 10 + burst 1
		{"abuser", 0},
	} {
		passed := 0
		for i := 0; i < 20; i++ {
			if enter(tc.user) == nil {
				passed++
			}
		}
		assert.Equal(t, tc.pass, passed, tc.user)
	}
	err := enter("alice")
	b := blockedBy(t, err)
	assert.Equal(t, "per-user", b.Rule)
	assert.Equal(t, core.KindHotspot, b.Kind)
	assert.Equal(t, "header:X-User-ID", b.Param)
	assert.Equal(t, 500*ms, b.RetryAfter, "one token per 500ms")

	// A request without the param is not limited by the rule.
	for i := 0; i < 20; i++ {
		require.NoError(t, enter())
	}
	fc.Advance(500 * ms)
	require.NoError(t, enter("alice"), "a token refilled")
	blockedBy(t, enter("alice"))
}

func TestHotspotEveryValueIsChecked(t *testing.T) {
	g, _ := newGuard(t,
		core.Rule{Name: "rate", Resource: "r", Kind: core.KindFlow, Limit: 100},
		core.Rule{Name: "per-tenant", Resource: "r", Kind: core.KindHotspot, Param: "query:tenant", Limit: 1},
	)
	ctx := context.Background()
	enter := func(tenants ...string) error {
		e, err := g.Enter(ctx, "r", core.WithParams(core.ParamMap{"query:tenant": tenants}))
		e.Exit(nil)
		return err
	}
	require.NoError(t, enter("a"))
	// b passes its own check, a is over: the request is blocked and b's
	// token given back.
	blockedBy(t, enter("b", "a"))
	require.NoError(t, enter("b"), "b's token was given back")
	blockedBy(t, enter("c", "b"))
}

// TestHotspotAloneAsWithOthers checks that a hotspot rule alone on its
// resource, which Enter decides on a path of its own, decides as it does
// with another rule: every value of the request, its quota policy, and
// its rejections in the rule's statistics.
func TestHotspotAloneAsWithOthers(t *testing.T) {
	hot := core.Rule{Name: "per-tenant", Resource: "r", Kind: core.KindHotspot, Param: "query:tenant", Limit: 1}
	for name, rules := range map[string][]core.Rule{
		"alone":       {hot},
		"with a flow": {{Name: "rate", Resource: "r", Kind: core.KindFlow, Limit: 100}, hot},
	} {
		t.Run(name, func(t *testing.T) {
			g, _ := quietGuard(t, rules...)
			ctx := context.Background()
			enter := func(quotas *[]core.Quota, tenants ...string) error {
				e, err := g.Enter(ctx, "r", core.WithParams(core.ParamMap{"query:tenant": tenants}), core.WithQuotas(quotas))
				e.Exit(nil)
				return err
			}
			var qs []core.Quota
			require.NoError(t, enter(&qs, "a", "b"))
			blockedBy(t, enter(&qs, "b"))
			blockedBy(t, enter(&qs, "a"))
			for _, tenant := range []string{"c", "d"} { // one value
				qs = qs[:0]
				require.NoError(t, enter(&qs, tenant))
				require.NotEmpty(t, qs)
				assert.Equal(t, core.Quota{Rule: "per-tenant", Limit: 1, Window: time.Second, Remaining: 0, Reset: time.Second}, qs[len(qs)-1])
			}
			st := ruleStats(t, g, "per-tenant")
			assert.Equal(t, int64(2), st.BlockedTotal)
			assert.Equal(t, int64(5), st.Evaluated)
		})
	}
}

func TestHotspotConcurrencyReleasedOnExitAndPanic(t *testing.T) {
	g, _ := newGuard(t, core.Rule{Name: "inflight-per-user", Resource: "*", Kind: core.KindHotspot,
		Param: "ip", Algorithm: core.AlgorithmConcurrency, Limit: 1})
	ctx := context.Background()
	alice := core.WithParams(core.ParamMap{"ip": {"192.0.2.1"}})
	bob := core.WithParams(core.ParamMap{"ip": {"192.0.2.2"}})

	held, err := g.Enter(ctx, "r", alice)
	require.NoError(t, err)
	_, err = g.Enter(ctx, "r", alice)
	b := blockedBy(t, err)
	assert.Zero(t, b.Window)
	assert.Zero(t, b.RetryAfter)
	other, err := g.Enter(ctx, "r", bob)
	require.NoError(t, err, "bob has his own slot")
	other.Exit(nil)
	held.Exit(nil)

	assert.PanicsWithValue(t, "boom", func() {
		e, err := g.Enter(ctx, "r", alice)
		require.NoError(t, err)
		defer e.Exit(nil)
		panic("boom")
	})
	e, err := g.Enter(ctx, "r", alice)
	require.NoError(t, err, "the panicking handler released alice's slot")
	e.Exit(nil)
}

// endless is a Params with a value for every index: "u0", "u1", ...
type endless struct{ calls *int }

func (e endless) Param(_ string, i int) (string, bool) {
	*e.calls++
	return fmt.Sprintf("u%d", i), true
}

func TestHotspotEndlessParamsBounded(t *testing.T) {
	for _, shared := range []bool{false, true} {
		r := core.Rule{Name: "per-user", Resource: "r", Kind: core.KindHotspot, Param: "header:X-User", Limit: 1, Window: time.Minute}
		fc := clock.NewFake(time.Hour)
		opts := []core.Option{core.WithClock(fc)}
		if shared {
			m, err := store.NewMemory(fc, 0)
			require.NoError(t, err)
			r.Store = "mem"
			opts = append(opts, core.WithStore("mem", m))
		}
		g, err := core.New(append(opts, core.WithRules(r))...)
		require.NoError(t, err)
		calls := 0
		e, err := g.Enter(context.Background(), "r", core.WithParams(endless{&calls}))
		require.NoError(t, err, "store %v", shared)
		e.Exit(nil)
		assert.LessOrEqual(t, calls, 66, "store %v: Param calls", shared)
		// The first 64 values are used up; a request with only the 64th
		// ("u63") is refused, one with the 65th ("u64") was never limited.
		_, err = g.Enter(context.Background(), "r", core.WithParams(core.ParamMap{"header:X-User": {"u63"}}))
		blockedBy(t, err)
		e, err = g.Enter(context.Background(), "r", core.WithParams(core.ParamMap{"header:X-User": {"u64"}}))
		require.NoError(t, err, "store %v", shared)
		e.Exit(nil)
		require.NoError(t, g.Close())
	}
}
