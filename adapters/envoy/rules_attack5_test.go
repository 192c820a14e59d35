package sluiceenvoy_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	sluiceenvoy "github.com/sluicekit/sluice/adapters/envoy"
	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/rulesfile"
)

// TestRulesOfAConfigFileDomainRefused: a sluice rule naming a domain that
// an envoyproxy/ratelimit file also has ("edge/user" beside edge.yaml)
// would never apply, as that file's limits alone decide the domain's
// descriptors. New and SetConfig refuse it, naming the rule and the
// domain, and the config in force stays. Before, it was taken and limited
// nothing: alice passed every time. Rules of other domains, and globs
// over domains, are still taken.
func TestRulesOfAConfigFileDomainRefused(t *testing.T) {
	bad := parseRules(t, "rules:\n  - {name: users, resource: edge/user, kind: hotspot, param: user, limit: 1}\n")
	cfg := domain(t, edge)
	cfg.Rules = bad
	g, err := core.New()
	require.NoError(t, err)
	defer g.Close()
	_, err = sluiceenvoy.New(g, cfg)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `rule "users"`)
	assert.Contains(t, err.Error(), `domain "edge"`)

	cfg.Rules = parseRules(t, "rules:\n  - {resource: api/user, kind: hotspot, param: user, limit: 1}\n  - {resource: \"*/*\", kind: flow, limit: 100}\n")
	c, s, _ := serve(t, cfg)
	cfg.Rules = bad
	require.Error(t, s.SetConfig(cfg))
	ask(t, c, "api", desc("user", "alice"))
	assert.Equal(t, "OVER_LIMIT", ask(t, c, "api", desc("user", "alice")).OverallCode.String(), "the config in force stays")
}

// parseRules parses a rules file's text.
func parseRules(t *testing.T, text string) []core.Rule {
	t.Helper()
	rules, err := rulesfile.Parse([]byte(text))
	require.NoError(t, err)
	return rules
}

// TestRuleParamNotAKeyRefused: the descriptors of the resource "api/user"
// have the one key "user", so a hotspot rule on it whose param is another
// name ("usr", a typo) never finds its param and, skipping requests that
// lack it, limits nothing. New and SetConfig refuse it, naming the rule,
// the param and the keys. Before, it was taken and alice passed every
// time. A glob resource, or a rule that does something with requests that
// lack its param (onMissing shared or reject), is taken.
func TestRuleParamNotAKeyRefused(t *testing.T) {
	for _, text := range []string{
		"rules:\n  - {name: users, resource: api/user, kind: hotspot, param: usr, limit: 1}\n",
		"rules:\n  - {name: users, resource: api/tenant/user, kind: hotspot, param: usr, limit: 1, onMissing: skip}\n",
	} {
		g, err := core.New()
		require.NoError(t, err)
		_, err = sluiceenvoy.New(g, sluiceenvoy.Config{Rules: parseRules(t, text)})
		require.Error(t, err, text)
		assert.Contains(t, err.Error(), `rule "users"`)
		assert.Contains(t, err.Error(), `param "usr"`)
		_ = g.Close()
	}

	c, s, _ := serve(t, sluiceenvoy.Config{Rules: parseRules(t, `rules:
  - {name: users, resource: api/user, kind: hotspot, param: user, limit: 1}
  - {name: any, resource: "api/*", kind: hotspot, param: usr, limit: 1}
  - {name: shared, resource: web/user, kind: hotspot, param: usr, limit: 1, onMissing: shared}
`)})
	ask(t, c, "api", desc("user", "alice"))
	assert.Equal(t, "OVER_LIMIT", ask(t, c, "api", desc("user", "alice")).OverallCode.String())
	ask(t, c, "web", desc("user", "alice"))
	assert.Equal(t, "OVER_LIMIT", ask(t, c, "web", desc("user", "bob")).OverallCode.String())
	require.Error(t, s.SetConfig(sluiceenvoy.Config{Rules: parseRules(t, "rules:\n  - {name: users, resource: api/user, kind: hotspot, param: usr, limit: 1}\n")}))
}

// TestRulesOfNoDescriptorRefused: a resource of sluice rules with an empty
// domain ("/api/user", written as a path) or an empty key ("api/",
// "api//user") names descriptors no request has (requests with an empty
// domain or key are refused), so its rule would never apply. New refuses
// it, naming the rule. Before, it was taken and limited nothing.
func TestRulesOfNoDescriptorRefused(t *testing.T) {
	for _, res := range []string{"/api/user", "api/", "api//user"} {
		g, err := core.New()
		require.NoError(t, err)
		_, err = sluiceenvoy.New(g, sluiceenvoy.Config{Rules: []core.Rule{{Name: "r", Resource: res, Kind: core.KindFlow, Limit: 1}}})
		assert.ErrorContains(t, err, `rule "r"`, res)
		_ = g.Close()
	}
}
