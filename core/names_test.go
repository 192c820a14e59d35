package core_test

import (
	"context"
	"fmt"
	"github.com/sluicekit/sluice/core/internal/logtest"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/clock"
)

// TestResourceRefusedWithRule checks that a refused resource names the
// rule, the field, the value and a suggestion, at construction and at
// SetRules, and that the rules in force stay.
func TestResourceRefusedWithRule(t *testing.T) {
	_, err := core.New(quietLog(), core.WithRules(
		core.Rule{Name: "ok", Resource: "GET /a", Kind: core.KindFlow, Limit: 1},
		core.Rule{Name: "items", Resource: "GET /items/[a-", Kind: core.KindFlow, Limit: 1},
	))
	require.Error(t, err)
	assert.Contains(t, err.Error(), `rules[1] (items): resource uses the glob syntax "[", which sluice does not support`)

	g, err := core.New(quietLog(), core.WithRules(core.Rule{Name: "ok", Resource: "GET /a", Kind: core.KindFlow, Limit: 1}))
	require.NoError(t, err)
	defer g.Close()
	err = g.SetRules([]core.Rule{{Resource: "FETCH /a", Kind: core.KindFlow, Limit: 1}})
	assert.EqualError(t, err, `rules[0]: resource method must be GET, HEAD, POST, PUT, PATCH, DELETE, CONNECT, OPTIONS, TRACE, OTHER or * (every method), got "FETCH" in "FETCH /a"`)
	require.Len(t, g.Rules(), 1)
	assert.Equal(t, "ok", g.Rules()[0].Name)
}

// TestNormalizedRuleLimits checks end to end that a rule written in a
// framework's syntax, in lower case or with stray spaces limits the
// requests named the canonical way, as the extractors name them; that a
// rule without a method limits every method, together; and that the
// normalization is logged once, at Info.
func TestNormalizedRuleLimits(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		resource string
		names    []string // entered in turn; the limit is 2 for them all
		other    string   // a name the rule does not limit
	}{
		{"GET /items/:id", []string{"GET /items/{id}"}, "POST /items/{id}"},
		{"get  /items/{id}", []string{"GET /items/{id}"}, "POST /items/{id}"},
		{"GET /files/*path", []string{"GET /files/{path...}"}, "GET /files/{other...}"},
		{"/items/:id", []string{"GET /items/{id}", "POST /items/{id}", "DELETE /items/{id}"}, "GET /items/{id}/x"},
		{"/items/*", []string{"GET /items/{id}", "OTHER /items/{id}/x"}, "GET /users/{id}"},
		{"/pkg.Svc/Get", []string{"/pkg.Svc/Get"}, "/pkg.Svc/List"},
	} {
		t.Run(tc.resource, func(t *testing.T) {
			logs := &logtest.Recorder{}
			g, err := core.New(core.WithClock(clock.NewFake(time.Hour)), core.WithLogger(slog.New(logs)),
				core.WithRules(core.Rule{Name: "r", Resource: tc.resource, Kind: core.KindFlow, Limit: 2, Window: time.Minute}))
			require.NoError(t, err)
			defer g.Close()
			var normalized []logtest.Record // logged by New, before any request
			for _, rec := range logs.Records() {
				if strings.Contains(rec.Msg, "normalized") {
					normalized = append(normalized, rec)
				}
			}
			passed := 0
			for i := range 6 {
				if e, err := g.Enter(ctx, tc.names[i%len(tc.names)]); err == nil {
					passed++
					e.Exit(nil)
				}
			}
			assert.Equal(t, 2, passed, "the rule limits %v", tc.names)
			for range 3 {
				e, err := g.Enter(ctx, tc.other)
				require.NoError(t, err, "the rule does not limit %s", tc.other)
				e.Exit(nil)
			}

			want, _ := core.CanonicalResource(tc.resource)
			assert.Equal(t, want, g.Rules()[0].Resource)
			if want == tc.resource {
				assert.Empty(t, normalized, "a canonical resource is not logged")
				return
			}
			require.Len(t, normalized, 1, "logged once")
			assert.Equal(t, slog.LevelInfo, normalized[0].Level)
			line := "rules[0] (r): " + strconv.Quote(tc.resource) + " is " + strconv.Quote(want)
			assert.Equal(t, fmt.Sprint([]string{line}), normalized[0].Attrs["rules"])
		})
	}
}

// TestRuleNames checks that names outside the charset every output
// carries as is are refused with the rule's index, the value and the
// allowed set, and that default names fit it and have no spaces.
func TestRuleNames(t *testing.T) {
	const allowed = "must contain only ASCII letters, digits and -_.:/{}*$#() (it is written as is in RateLimit fields, problem bodies, metrics and logs)"
	for _, name := range []string{"50%-off", "per user", `a"b`, `a\b`, "a,b", "a;q=1", "a=b", "é", "<b>", "a\tb"} {
		_, err := core.NormalizeRules([]core.Rule{
			{Name: "fine", Resource: "*", Kind: core.KindConcurrency},
			{Name: name, Resource: "*", Kind: core.KindConcurrency},
		})
		require.Error(t, err, name)
		var re *core.RulesError
		require.ErrorAs(t, err, &re)
		require.Len(t, re.Problems, 1, name)
		p := re.Problems[0]
		assert.Equal(t, 1, p.Index)
		assert.Equal(t, "name", p.Field)
		assert.Equal(t, allowed+", got "+strconv.Quote(name), p.Msg, name)
	}
	_, err := core.NormalizeRules([]core.Rule{{Name: "Rule-9_a.b:c/{d}*$#(e)", Resource: "*", Kind: core.KindConcurrency}})
	require.NoError(t, err)

	for _, tc := range []struct {
		rule core.Rule
		want string
	}{
		{core.Rule{Resource: "GET /items/{id}", Kind: core.KindFlow}, "flow:GET:/items/{id}"},
		{core.Rule{Resource: "GET /items/:id", Kind: core.KindFlow}, "flow:GET:/items/{id}"},
		{core.Rule{Resource: "*", Kind: core.KindConcurrency}, "concurrency:*"},
		{core.Rule{Resource: "GET /items/{id}", Kind: core.KindHotspot, Param: "header:X-User-ID"}, "hotspot:GET:/items/{id}:header:X-User-ID"},
		{core.Rule{Resource: "/pkg.Svc/*", Kind: core.KindBreaker, Strategy: "error-count", Threshold: 1}, "breaker:/pkg.Svc/*"},
		{core.Rule{Resource: "db query+é", Kind: core.KindConcurrency}, "concurrency:db:query__"},
		{core.Rule{Resource: "(unmatched)", Kind: core.KindConcurrency}, "concurrency:(unmatched)"},
	} {
		got, err := core.NormalizeRules([]core.Rule{tc.rule})
		require.NoError(t, err, tc.rule.Resource)
		assert.Equal(t, tc.want, got[0].Name)
		_, err = core.NormalizeRules(got)
		assert.NoError(t, err, "a default name is a valid name")
	}
}

func quietLog() core.Option { return core.WithLogger(slog.New(slog.DiscardHandler)) }
