package rulesfile_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/sluicekit/sluice/core/rulesfile"
)

// TestIntegersBeyond64BitsGetTheFieldsOwnBound: an integer written beyond
// 64 bits, of any sign and base, gets the problem its field's own bound
// gives, naming the rule, the field and the value as written. Before, a
// negative one said "must be >= -9223372036854775808" (a limit must be
// >= 0), a positive one "must be <= 9223372036854775807" (a limit must be
// <= 4503599627370496), and one in hex, octal or binary "must be an
// integer".
func TestIntegersBeyond64BitsGetTheFieldsOwnBound(t *testing.T) {
	const flow = "rules:\n  - name: a\n    resource: x\n    kind: flow\n    limit: "
	const hotspot = "rules:\n  - name: h\n    resource: x\n    kind: hotspot\n    param: ip\n    limit: 5\n    "
	for _, tc := range []struct{ doc, want string }{
		{flow + "-99999999999999999999\n", "rules[0] (a): line 5: limit must be >= 0, got -99999999999999999999"},
		{flow + "99999999999999999999\n", "rules[0] (a): line 5: limit must be <= 4503599627370496, got 99999999999999999999"},
		{flow + "0x1ffffffffffffffff\n", "rules[0] (a): line 5: limit must be <= 4503599627370496, got 0x1ffffffffffffffff"},
		{flow + "-0x1ffffffffffffffff\n", "rules[0] (a): line 5: limit must be >= 0, got -0x1ffffffffffffffff"},
		{flow + "0xffffffffffffffff\n", "rules[0] (a): line 5: limit must be <= 4503599627370496, got 0xffffffffffffffff"},
		{flow + "0o7777777777777777777777\n", "rules[0] (a): line 5: limit must be <= 4503599627370496, got 0o7777777777777777777777"},
		{flow + "-0b1_0000000000000000000000000000000000000000000000000000000000000001\n",
			"rules[0] (a): line 5: limit must be >= 0, got -0b1_00000000000000000000000000000000000000000000000000000000000..."},
		{hotspot + "maxKeys: -99999999999999999999\n", "rules[0] (h): line 7: maxKeys must be >= 0, got -99999999999999999999"},
		{hotspot + "maxKeys: 0x10000000000000000\n", "rules[0] (h): line 7: maxKeys must be <= 10000000, got 0x10000000000000000"},
		{hotspot + "overrides:\n      b: 1\n      a: -0x10000000000000000\n      c: 99999999999999999999\n",
			"rules[0] (h): line 9: overrides value for \"a\" must be >= 0, got -0x10000000000000000\n" +
				"rules[0] (h): line 10: overrides value for \"c\" must be <= 1000000000 (one request per nanosecond) with window 1s, got 99999999999999999999"},
		{flow + "5\n    buckets: -99999999999999999999\n", "rules[0] (a): line 6: buckets must be between 1 and 1000, got -99999999999999999999"},
		// No bound of its own applies (coldFactor needs warmup): the bound of its 64 bits.
		{flow + "5\n    coldFactor: 99999999999999999999\n", "rules[0] (a): line 6: coldFactor must be <= 9223372036854775807, got 99999999999999999999"},
		// JSON: the same problems.
		{`{"rules": [{"name": "a", "resource": "x", "kind": "flow", "limit": -99999999999999999999}]}`,
			"rules[0] (a): line 1: limit must be >= 0, got -99999999999999999999"},
		// Quoted, a number is a string.
		{flow + "\"-99999999999999999999\"\n", "rules[0] (a): line 5: limit must be an integer, got \"-99999999999999999999\""},
		{`{"rules": [{"name": "a", "resource": "x", "kind": "flow", "limit": "0x1ffffffffffffffff"}]}`,
			"rules[0] (a): line 1: limit must be an integer, got \"0x1ffffffffffffffff\""},
	} {
		_, err := rulesfile.Parse([]byte(tc.doc))
		require.Error(t, err, tc.doc)
		assert.Equal(t, tc.want, err.Error(), tc.doc)
	}

	// rulesfile.Rules reads them alike, in YAML and JSON.
	var rs rulesfile.Rules
	err := yaml.Unmarshal([]byte("- {name: a, resource: x, kind: flow, limit: -0x10000000000000000}\n"), &rs)
	require.Error(t, err)
	assert.Equal(t, "rules[0] (a): line 1: limit must be >= 0, got -0x10000000000000000", err.Error())
	err = json.Unmarshal([]byte(`[{"name": "a", "resource": "x", "kind": "flow", "limit": 18446744073709551616}]`), &rs)
	require.Error(t, err)
	assert.Equal(t, "rules[0] (a): line 1: limit must be <= 4503599627370496, got 18446744073709551616", err.Error())
	assert.Nil(t, rs)
}
