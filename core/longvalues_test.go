package core_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/breaker"
	"github.com/sluicekit/sluice/core/dashboard"
	"github.com/sluicekit/sluice/core/store"
)

// maxErrLen bounds an error that names a 1 MB value: the value is quoted
// shortened (core.Quote), the rest is the field and what is allowed.
const maxErrLen = 512

// TestErrorsQuoteLongValuesShort: a rule, option or call with a 1 MB value
// is refused with an error that names the field and a shortened value, not
// one that echoes the megabyte (before, "unknown algorithm", a breaker's
// strategy, an unknown store, an override key, Enter's resource and
// WithStore's name were echoed whole).
func TestErrorsQuoteLongValuesShort(t *testing.T) {
	big := strings.Repeat("a", 1<<20)
	key := strings.Repeat("k", 1000) // an override key must be at most 1024 bytes
	short := func(t *testing.T, err error, field string) {
		t.Helper()
		require.Error(t, err)
		msg := err.Error()
		assert.Less(t, len(msg), maxErrLen, "%.300s", msg)
		assert.Contains(t, msg, field)
		assert.Contains(t, msg, `aaaa"...`, "the value is named, shortened")
	}
	flow := core.Rule{Resource: "GET /a", Kind: core.KindFlow, Limit: 5, Window: time.Second}
	hot := core.Rule{Resource: "GET /a", Kind: core.KindHotspot, Param: "ip", Limit: 5, Window: time.Second}
	for name, tc := range map[string]struct {
		rule  func(r core.Rule) core.Rule
		base  core.Rule
		field string
	}{
		"flow algorithm":    {func(r core.Rule) core.Rule { r.Algorithm = core.Algorithm(big); return r }, flow, "algorithm"},
		"hotspot algorithm": {func(r core.Rule) core.Rule { r.Algorithm = core.Algorithm(big); return r }, hot, "algorithm"},
		"breaker strategy": {func(r core.Rule) core.Rule {
			r.Kind, r.Limit, r.Strategy = core.KindBreaker, 0, breaker.Strategy(big)
			return r
		}, flow, "strategy"},
		"unknown store": {func(r core.Rule) core.Rule { r.Store = big; return r }, flow, "store"},
		"resource":      {func(r core.Rule) core.Rule { r.Resource = "GET /" + big[:1000] + " x"; return r }, flow, "resource"}, // a longer one is refused by its length
		"name":          {func(r core.Rule) core.Rule { r.Name = big + "!"; return r }, flow, "name"},
		"kind":          {func(r core.Rule) core.Rule { r.Kind = core.Kind(big); return r }, flow, "kind"},
		"mode":          {func(r core.Rule) core.Rule { r.Store, r.Mode = "redis", store.Mode(big); return r }, flow, "mode"},
		"onMissing":     {func(r core.Rule) core.Rule { r.OnMissing = core.OnMissing(big); return r }, hot, "onMissing"},
		"override key":  {func(r core.Rule) core.Rule { r.Overrides = map[string]int64{big: 3}; return r }, hot, "overrides"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := core.New(core.WithRules(tc.rule(tc.base)))
			short(t, err, tc.field)
		})
	}
	t.Run("override value", func(t *testing.T) {
		r := hot
		r.Overrides = map[string]int64{key: -3}
		_, err := core.New(core.WithRules(r))
		require.Error(t, err)
		assert.Less(t, len(err.Error()), maxErrLen, "%.300s", err)
		assert.Contains(t, err.Error(), "overrides")
	})
	t.Run("Enter", func(t *testing.T) {
		g, err := core.New()
		require.NoError(t, err)
		defer g.Close()
		_, err = g.Enter(context.Background(), big, core.WithCount(0))
		short(t, err, "count")
	})
	t.Run("WithStore", func(t *testing.T) {
		_, err := core.New(core.WithStore(big+"!", nil))
		short(t, err, "WithStore")
		_, err = core.New(core.WithStore(big, nil))
		short(t, err, "WithStore")
	})
	t.Run("dashboard title", func(t *testing.T) {
		g, err := core.New()
		require.NoError(t, err)
		defer g.Close()
		_, err = dashboard.New(g, dashboard.WithTitle(big))
		short(t, err, "WithTitle")
	})
	assert.Equal(t, `"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"...`, core.Quote(big))
	assert.Equal(t, `"a\nb"`, core.Quote("a\nb"))
}

// TestHugeParamNamesRefused: a param names a header, query, cookie, path
// or metadata key, or a custom param, of at most 256 bytes; a megabyte
// one, which every request would look up, was accepted.
func TestHugeParamNamesRefused(t *testing.T) {
	huge := "header:" + strings.Repeat("x", 1<<20)
	_, err := core.New(core.WithRules(core.Rule{Resource: "GET /a", Kind: core.KindHotspot, Param: huge, Limit: 5, Window: time.Second}))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "param must be at most 256 bytes, got 1048583 bytes")
	assert.Less(t, len(err.Error()), 512)
	assert.NoError(t, core.ValidateParam("header:"+strings.Repeat("x", 249)), "256 bytes are allowed")
	assert.Error(t, core.ValidateParam("header:"+strings.Repeat("x", 250)))
}
