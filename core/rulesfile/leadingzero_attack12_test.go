package rulesfile_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core/rulesfile"
)

// TestLeadingZeroIntegersAreRefused: an operator who pads a number with a
// zero ("limit: 0100", columns aligned) means 100, and a YAML 1.2 editor
// with the file's JSON Schema shows 100; the YAML library reads it as YAML
// 1.1 octal, 64. Before, the rule silently applied 64 (maxKeys 010000 was
// 4096, an override of 010 was 8). Such a number must be refused, naming
// rule, field, line and value, and telling how to write either reading;
// 0o10, 1_000 and +5 are unambiguous and still read.
func TestLeadingZeroIntegersAreRefused(t *testing.T) {
	for _, tt := range []struct{ rule, want string }{
		{`{name: a, resource: "*", kind: flow, limit: 0100}`,
			`rules[0] (a): line 2: limit must be an integer without a leading 0, got 0100: YAML 1.1 reads it as octal, YAML 1.2 as decimal; write 100, or 0o100 for octal`},
		{`{name: a, resource: "*", kind: flow, limit: -010}`,
			`rules[0] (a): line 2: limit must be an integer without a leading 0, got -010: YAML 1.1 reads it as octal, YAML 1.2 as decimal; write -10, or -0o10 for octal`},
		{`{name: a, resource: "*", kind: hotspot, param: ip, limit: 5, maxKeys: 010000}`,
			`rules[0] (a): line 2: maxKeys must be an integer without a leading 0, got 010000: YAML 1.1 reads it as octal, YAML 1.2 as decimal; write 10000, or 0o10000 for octal`},
		{`{name: a, resource: "*", kind: hotspot, param: ip, limit: 5, overrides: {"10.0.0.1": 010}}`,
			`rules[0] (a): line 2: overrides value for "10.0.0.1" must be an integer without a leading 0, got 010: YAML 1.1 reads it as octal, YAML 1.2 as decimal; write 10, or 0o10 for octal`},
		{`{name: a, resource: "*", kind: breaker, strategy: error-count, threshold: 010}`,
			`rules[0] (a): line 2: threshold must be a number without a leading 0, got 010: YAML 1.1 reads it as octal, YAML 1.2 as decimal; write 10, or 0o10 for octal`},
	} {
		_, err := rulesfile.Parse([]byte("rules:\n  - " + tt.rule + "\n"))
		require.Error(t, err, tt.rule)
		assert.EqualError(t, err, tt.want, tt.rule)
	}
	for _, tt := range []struct {
		limit string
		want  int64
	}{{"0o10", 8}, {"1_000", 1000}, {"+5", 5}, {"0", 0}, {"0x10", 16}, {"10", 10}} {
		rules, err := rulesfile.Parse([]byte(`rules: [{name: a, resource: "*", kind: flow, limit: ` + tt.limit + `}]`))
		require.NoError(t, err, tt.limit)
		assert.Equal(t, tt.want, rules[0].Limit, tt.limit)
	}
}
