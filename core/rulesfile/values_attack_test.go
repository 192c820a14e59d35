package rulesfile_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/sluicekit/sluice/core/rulesfile"
)

// flowYAML is a YAML rules file of one flow rule named a with the extra
// fields given.
func flowYAML(extra string) string {
	return "rules:\n- name: a\n  resource: r\n  kind: flow\n" + extra
}

// TestHostileValuesNameRuleFieldAndValue gives every rules entry point
// values at and past the edges (huge, negative, NaN, infinite, fractional,
// out-of-range integers, durations past what a Duration holds, invalid
// UTF-8, NUL, a YAML alias bomb, deep nesting, a 400 KB resource): each
// is refused by Parse, Load (YAML and JSON files) and NewGuard with a
// problem naming the rule, the field, the value and what is allowed, and
// Rules' decoders do not panic.
func TestHostileValuesNameRuleFieldAndValue(t *testing.T) {
	for _, tc := range []struct{ name, data, want string }{
		{"limit past float64", `{"rules":[{"name":"a","resource":"r","kind":"flow","limit":1e400}]}`, `rules[0] (a): line 1: limit must be an integer, got 1e400`},
		{"limit past int64", `{"rules":[{"name":"a","resource":"r","kind":"flow","limit":9223372036854775808}]}`, `rules[0] (a): line 1: limit must be <= 4503599627370496, got 9223372036854775808`},
		{"limit max int64", flowYAML("  limit: 9223372036854775807\n"), `rules[0] (a): line 5: limit must be <= 4503599627370496, got 9223372036854775807`},
		{"limit NaN", flowYAML("  limit: .nan\n"), `rules[0] (a): line 5: limit must be an integer, got .nan`},
		{"limit -Inf", flowYAML("  limit: -.inf\n"), `rules[0] (a): line 5: limit must be an integer, got -.inf`},
		{"limit fraction", flowYAML("  limit: 1.5\n"), `rules[0] (a): line 5: limit must be an integer, got 1.5`},
		{"window negative", flowYAML("  limit: 1\n  window: -1s\n"), `rules[0] (a): line 6: window must be > 0, got -1s`},
		{"window past Duration", flowYAML("  limit: 1\n  window: 9999999h\n"), `rules[0] (a): line 6: window must be a Go duration such as 1s or 250ms, got "9999999h"`},
		{"window max Duration", flowYAML("  limit: 1\n  window: 2562047h\n"), `rules[0] (a): line 6: window must be <= 1250h59m59.627370496s (4503599627370496 ns), got 2562047h0m0s`},
		{"buckets huge", flowYAML("  limit: 1\n  buckets: 2000000000\n"), `rules[0] (a): line 6: buckets must be between 1 and 1000, got 2000000000`},
		{"maxWait huge", flowYAML("  algorithm: leaky-bucket\n  limit: 1\n  maxWait: 2562047h\n"), `maxWait must be <= 1250h59m59.627370496s (4503599627370496 ns), got 2562047h0m0s`},
		{"sliding-log huge", flowYAML("  algorithm: sliding-log\n  limit: 2000000\n"), `rules[0] (a): line 6: limit must be <= 1048576 with algorithm sliding-log (one timestamp is kept per request), got 2000000`},
		{"concurrency negative", "rules:\n- name: a\n  resource: r\n  kind: concurrency\n  limit: -5\n", `rules[0] (a): line 5: limit must be >= 0, got -5`},
		{"maxKeys huge", "rules:\n- name: a\n  resource: r\n  kind: hotspot\n  param: ip\n  limit: 1\n  maxKeys: 9223372036854775807\n", `rules[0] (a): line 7: maxKeys must be <= 10000000, got 9223372036854775807`},
		{"maxKeys negative", "rules:\n- name: a\n  resource: r\n  kind: hotspot\n  param: ip\n  limit: 1\n  maxKeys: -1\n", `rules[0] (a): line 7: maxKeys must be >= 0, got -1`},
		{"override negative", "rules:\n- name: a\n  resource: r\n  kind: hotspot\n  param: ip\n  limit: 1\n  overrides: {x: -1}\n", `rules[0] (a): line 7: overrides value for "x" must be >= 0, got -1`},
		{"duplicate key", `{"rules":[{"name":"a","resource":"r","kind":"flow","limit":1,"limit":2}]}`, `rules[0] (a): line 1: key "limit" is set twice (first on line 1)`},
		{"Unicode name", "rules:\n- name: ユーザー\n  resource: r\n  kind: flow\n  limit: 1\n", `rules[0] ("ユーザー"): line 2: name must contain only ASCII letters, digits and -_.:/{}*$#()`},
		{"long resource", "rules:\n- name: a\n  resource: " + strings.Repeat("x", 400_000) + "\n  kind: flow\n  limit: 1\n", `rules[0] (a): line 3: resource must be at most 1024 bytes, got 400000`},
		{"invalid UTF-8", "rules:\n- name: a\n  resource: \xff\xfe\n  kind: flow\n  limit: 1\n", `line 3: yaml: invalid leading UTF-8 octet`},
		{"NUL", "rules:\n- name: a\x00\n  resource: r\n  kind: flow\n  limit: 1\n", `line 2: yaml: control characters are not allowed`},
		{"merge key", "rules:\n- <<: {name: a, resource: r, kind: flow, limit: 1}\n", `rules[0]: line 2: unknown field "<<"`},
		{"alias bomb", "a: &a [x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\ng: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]\nrules: *g\n", `line 1: unknown top-level key "a"`},
		{"deep flow nesting", "rules: " + strings.Repeat("[", 10_000) + strings.Repeat("]", 10_000), `rules[0]: line 1: a rule must be a mapping of fields such as resource and kind, got a list`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := []byte(tc.data)
			_, err := rulesfile.Parse(data)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			for _, file := range []string{"rules.yaml", "rules.json"} {
				path := filepath.Join(t.TempDir(), file)
				require.NoError(t, os.WriteFile(path, data, 0o600))
				_, err := rulesfile.Load(path)
				assert.Error(t, err, file)
				g, err := rulesfile.NewGuard(path)
				assert.Error(t, err, file)
				assert.Nil(t, g)
			}
			var rs rulesfile.Rules
			_ = rs.UnmarshalJSON(data)
			_ = json.Unmarshal(data, &rs)
			_ = yaml.Unmarshal(data, &rs)
		})
	}
}
