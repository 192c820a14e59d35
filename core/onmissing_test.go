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

// TestHotspotOnMissing enters requests with and without the param of a
// hotspot rule (limit 2 per second, at one instant) under each OnMissing
// policy, in the Guard's memory and in a store.
func TestHotspotOnMissing(t *testing.T) {
	const param = "header:X-User-ID"
	// A request: nil is one without WithParams, an empty list one whose
	// params lack the rule's.
	none, empty := []string(nil), []string{}
	for _, tc := range []struct {
		mode     core.OnMissing
		requests [][]string
		passed   int
	}{
		{"", [][]string{none, empty, none, empty, none}, 5},
		{core.MissingSkip, [][]string{none, empty, none, empty, none}, 5},
		{core.MissingSkip, [][]string{{"alice"}, {"alice"}, {"alice"}, none, empty}, 4},
		{core.MissingReject, [][]string{none, empty, none}, 0},
		{core.MissingReject, [][]string{{"alice"}, {"alice"}, {"alice"}, {"bob"}}, 3},
		{core.MissingShared, [][]string{none, empty, none, empty, none}, 2},
		{core.MissingShared, [][]string{none, none, none, {"alice"}, {"alice"}, {"alice"}}, 4},
		// A value no request can send: a client's NUL byte, or NULs, are
		// values of their own.
		{core.MissingShared, [][]string{none, none, none, {"\x00"}, {"\x00"}, {"\x00\x00"}, {"\x00\x00"}, none}, 6},
	} {
		for _, where := range []string{"memory", "store"} {
			name := fmt.Sprintf("%s/%s/%q", tc.mode, where, tc.requests)
			t.Run(name, func(t *testing.T) {
				fc := clock.NewFake(10 * time.Second)
				rule := core.Rule{Name: "per-user", Resource: "r", Kind: core.KindHotspot, Param: param, Limit: 2, OnMissing: tc.mode}
				opts := []core.Option{core.WithClock(fc)}
				if where == "store" {
					m, err := store.NewMemory(fc, 0)
					require.NoError(t, err)
					rule.Store = "shared"
					opts = append(opts, core.WithStore("shared", m))
				}
				g, err := core.New(append(opts, core.WithRules(rule))...)
				require.NoError(t, err)
				passed := 0
				for _, values := range tc.requests {
					var eo []core.EnterOption
					if values != nil {
						eo = append(eo, core.WithParams(core.ParamMap{param: values}))
					}
					e, err := g.Enter(context.Background(), "r", eo...)
					if err == nil {
						passed++
						e.Exit(nil)
						continue
					}
					b := blockedBy(t, err)
					assert.Equal(t, "per-user", b.Rule)
					assert.Equal(t, param, b.Param)
					if tc.mode == core.MissingReject && len(values) == 0 {
						assert.True(t, b.Never, "a request without the param never passes")
						assert.Zero(t, b.RetryAfter)
						assert.Zero(t, b.Limit)
					} else {
						assert.False(t, b.Never)
						assert.Positive(t, b.RetryAfter)
					}
				}
				assert.Equal(t, tc.passed, passed)
				s := g.Snapshot()
				require.Len(t, s.Rules, 1)
				assert.Equal(t, int64(len(tc.requests)-passed), s.Rules[0].BlockedTotal, "each rejection counts as a block of the rule")
				assert.Equal(t, tc.mode, s.Rules[0].Rule.OnMissing)
			})
		}
	}
}

// TestHotspotOnMissingRejectAfterOtherRejection: a request rejected by a
// flow rule and lacking the param of a reject rule never passes either,
// and the BlockedError says so.
func TestHotspotOnMissingRejectAfterOtherRejection(t *testing.T) {
	g, _ := newGuard(t,
		core.Rule{Name: "rate", Resource: "r", Kind: core.KindFlow, Limit: 0},
		core.Rule{Name: "need-user", Resource: "r", Kind: core.KindHotspot, Param: "header:X-User-ID", Limit: 5, Burst: 3, OnMissing: core.MissingReject},
	)
	_, err := g.Enter(context.Background(), "r")
	b := blockedBy(t, err)
	assert.True(t, b.Never)
	require.Len(t, b.Policies, 2)
	assert.True(t, b.Policies[1].Blocked)
	assert.Equal(t, "need-user", b.Policies[1].Rule)
	// Burst does not make a missing param pass some day.
	g, _ = newGuard(t, core.Rule{Name: "need-user", Resource: "r", Kind: core.KindHotspot, Param: "header:X-User-ID", Limit: 5, Burst: 3, OnMissing: core.MissingReject})
	_, err = g.Enter(context.Background(), "r", core.WithParams(core.ParamMap{}))
	b = blockedBy(t, err)
	assert.True(t, b.Never)
	assert.Equal(t, "need-user", b.Rule)
}

// TestHotspotOnMissingSharedWindow: the shared state refills like a value's.
func TestHotspotOnMissingSharedWindow(t *testing.T) {
	g, fc := newGuard(t, core.Rule{Name: "anon", Resource: "r", Kind: core.KindHotspot, Param: "ip", Limit: 1, Window: time.Second, OnMissing: core.MissingShared})
	enter := func() error {
		e, err := g.Enter(context.Background(), "r")
		e.Exit(nil)
		return err
	}
	require.NoError(t, enter())
	b := blockedBy(t, enter())
	assert.Equal(t, time.Second, b.RetryAfter)
	fc.Advance(time.Second)
	require.NoError(t, enter())
}

func TestCheckRulesOnMissing(t *testing.T) {
	hot := core.Rule{Name: "per-user", Resource: "*", Kind: core.KindHotspot, Param: "ip", Limit: 1}
	with := func(r core.Rule, f func(*core.Rule)) core.Rule { f(&r); return r }
	for _, tc := range []struct {
		name string
		rule core.Rule
		want string
	}{
		{"unknown value", with(hot, func(r *core.Rule) { r.OnMissing = "deny" }),
			`rules[0] (per-user): onMissing must be skip, reject or shared, got "deny"`},
		{"case matters", with(hot, func(r *core.Rule) { r.OnMissing = "Reject" }),
			`rules[0] (per-user): onMissing must be skip, reject or shared, got "Reject"`},
		{"flow rule", core.Rule{Name: "f", Resource: "*", Kind: core.KindFlow, Limit: 1, OnMissing: core.MissingReject},
			"rules[0] (f): onMissing does not apply to kind flow (only to kind hotspot)"},
		{"concurrency rule", core.Rule{Name: "c", Resource: "*", Kind: core.KindConcurrency, Limit: 1, OnMissing: core.MissingSkip},
			"rules[0] (c): onMissing does not apply to kind concurrency (only to kind hotspot)"},
		{"breaker rule", core.Rule{Name: "b", Resource: "*", Kind: core.KindBreaker, Strategy: "error-count", Threshold: 5, OnMissing: core.MissingShared},
			"rules[0] (b): onMissing does not apply to kind breaker (only to kind hotspot)"},
		{"reserved override", with(hot, func(r *core.Rule) {
			r.OnMissing, r.Overrides = core.MissingShared, map[string]int64{"\x00": 5}
		}), `rules[0] (per-user): overrides key "\x00" must not start with a NUL byte with onMissing shared (reserved for the requests without the param)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := core.NormalizeRules([]core.Rule{tc.rule})
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			_, err = core.New(core.WithRules(tc.rule))
			require.Error(t, err, "New refuses it")
			g, _ := newGuard(t)
			require.Error(t, g.SetRules([]core.Rule{tc.rule}), "SetRules refuses it")
		})
	}
	for _, m := range []core.OnMissing{"", core.MissingSkip, core.MissingReject, core.MissingShared} {
		_, err := core.NormalizeRules([]core.Rule{with(hot, func(r *core.Rule) {
			r.OnMissing, r.Overrides = m, map[string]int64{"x\x00": 1}
		})})
		require.NoError(t, err, m)
	}
}
