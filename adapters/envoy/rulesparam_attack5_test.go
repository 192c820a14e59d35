package sluiceenvoy_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	sluiceenvoy "github.com/sluicekit/sluice/adapters/envoy"
	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/rulesfile"
)

// TestRuleParamNotAKeyRefused: the descriptors of the resource "api/user"
// have the one key "user", so a hotspot rule on it whose param is another
// name ("usr", a typo) never finds its param and, skipping requests that
// lack it, limits nothing. New and SetConfig refuse it, naming the rule,
// the param and the keys. Before, it was taken and alice passed every
// time. A glob resource, or a rule that does something with requests that
// lack its param (onMissing shared or reject), is taken.
func TestRuleParamNotAKeyRefused(t *testing.T) {
	parse := func(text string) []core.Rule {
		rules, err := rulesfile.Parse([]byte(text))
		require.NoError(t, err)
		return rules
	}
	for _, text := range []string{
		"rules:\n  - {name: users, resource: api/user, kind: hotspot, param: usr, limit: 1}\n",
		"rules:\n  - {name: users, resource: api/tenant/user, kind: hotspot, param: usr, limit: 1, onMissing: skip}\n",
	} {
		g, err := core.New()
		require.NoError(t, err)
		_, err = sluiceenvoy.New(g, sluiceenvoy.Config{Rules: parse(text)})
		require.Error(t, err, text)
		assert.Contains(t, err.Error(), `rule "users"`)
		assert.Contains(t, err.Error(), `param "usr"`)
		_ = g.Close()
	}

	c, s, _ := serve(t, sluiceenvoy.Config{Rules: parse(`rules:
  - {name: users, resource: api/user, kind: hotspot, param: user, limit: 1}
  - {name: any, resource: "api/*", kind: hotspot, param: usr, limit: 1}
  - {name: shared, resource: web/user, kind: hotspot, param: usr, limit: 1, onMissing: shared}
`)})
	ask(t, c, "api", desc("user", "alice"))
	assert.Equal(t, "OVER_LIMIT", ask(t, c, "api", desc("user", "alice")).OverallCode.String())
	ask(t, c, "web", desc("user", "alice"))
	assert.Equal(t, "OVER_LIMIT", ask(t, c, "web", desc("user", "bob")).OverallCode.String())
	require.Error(t, s.SetConfig(sluiceenvoy.Config{Rules: parse("rules:\n  - {name: users, resource: api/user, kind: hotspot, param: usr, limit: 1}\n")}))
}
