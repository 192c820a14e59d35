package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	gopkgyaml "gopkg.in/yaml.v3"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/rulesfile"
)

// TestRulesDecodeWithGopkgYAML attacks rulesfile.Rules's doc, "decodes ... with
// encoding/json, go.yaml.in/yaml/v3 or gopkg.in/yaml.v3", with
// gopkg.in/yaml.v3, still the YAML library most programs read their
// configuration with. Before, its decoder could not call Rules's
// UnmarshalYAML (it takes go.yaml.in's Node, another type), decoded each
// rule as a core.Rule and failed with "a core.Rule is not decoded
// directly: decode a list of rules into a rulesfile.Rules", which the
// program did. The rules must decode, and a bad field be refused naming
// rule and field, as with go.yaml.in/yaml/v3 (which gives lines too).
// (The test lives here, beside a program that loads rules, so that the root
// module does not require gopkg.in/yaml.v3.)
func TestRulesDecodeWithGopkgYAML(t *testing.T) {
	var config struct {
		Addr  string          `yaml:"addr"`
		Rules rulesfile.Rules `yaml:"rules"`
	}
	require.NoError(t, gopkgyaml.Unmarshal([]byte(`addr: ":8080"
rules:
  - {name: hello, resource: "GET /hello", kind: flow, limit: 5, window: 2s}
  - name: per-user
    resource: "*"
    kind: hotspot
    param: "header:X-User"
    limit: 3
    overrides: {vip: 100}
`), &config))
	require.Len(t, config.Rules, 2)
	assert.Equal(t, core.Rule{Name: "hello", Resource: "GET /hello", Kind: core.KindFlow, Limit: 5, Window: 2 * time.Second}, config.Rules[0])
	assert.Equal(t, map[string]int64{"vip": 100}, config.Rules[1].Overrides)
	assert.Equal(t, "header:X-User", config.Rules[1].Param)

	err := gopkgyaml.Unmarshal([]byte("rules:\n  - {name: hello, resource: \"GET /hello\", kind: flow, limit: 5, window: 1}\n"), &config)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "rules[0] (hello): window must be a Go duration such as 1s or 250ms, got 1")
}
