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
	parse := func(text string) []core.Rule {
		rules, err := rulesfile.Parse([]byte(text))
		require.NoError(t, err)
		return rules
	}
	bad := parse("rules:\n  - {name: users, resource: edge/user, kind: hotspot, param: user, limit: 1}\n")
	cfg := domain(t, edge)
	cfg.Rules = bad
	g, err := core.New()
	require.NoError(t, err)
	defer g.Close()
	_, err = sluiceenvoy.New(g, cfg)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `rule "users"`)
	assert.Contains(t, err.Error(), `domain "edge"`)

	cfg.Rules = parse("rules:\n  - {resource: api/user, kind: hotspot, param: user, limit: 1}\n  - {resource: \"*/*\", kind: flow, limit: 100}\n")
	c, s, _ := serve(t, cfg)
	cfg.Rules = bad
	require.Error(t, s.SetConfig(cfg))
	ask(t, c, "api", desc("user", "alice"))
	assert.Equal(t, "OVER_LIMIT", ask(t, c, "api", desc("user", "alice")).OverallCode.String(), "the config in force stays")
}
