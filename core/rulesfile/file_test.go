package rulesfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/sluicekit/sluice/core"
)

// exampleRules are the rules of the RULES.md example (testdata/rules.yaml
// and testdata/rules.json), normalized.
var exampleRules = []core.Rule{
	{
		Name:      "items-rate",
		Resource:  "GET /items/{id}",
		Kind:      core.KindFlow,
		Limit:     100,
		Window:    time.Second,
		Algorithm: "leap-array",
		Buckets:   10,
	},
	{
		Name:      "per-user",
		Resource:  "GET /items/{id}",
		Kind:      core.KindHotspot,
		Param:     "header:X-User-ID",
		Limit:     10,
		Window:    time.Second,
		Algorithm: "token-bucket",
		Burst:     5,
		MaxKeys:   100000,
		Overrides: map[string]int64{"vip": 1000, "abuser": 0},
	},
	{
		Name:     "concurrency:*",
		Resource: "*",
		Kind:     core.KindConcurrency,
		Limit:    200,
	},
}

func TestParseExample(t *testing.T) {
	for file, format := range map[string]fileFormat{"testdata/rules.yaml": formatYAML, "testdata/rules.json": formatJSON} {
		data, err := os.ReadFile(file)
		require.NoError(t, err)
		rules, err := parse(data, format)
		require.NoError(t, err, file)
		assert.Equal(t, exampleRules, rules, file)
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	yamlData, err := os.ReadFile("testdata/rules.yaml")
	require.NoError(t, err)
	jsonData, err := os.ReadFile("testdata/rules.json")
	require.NoError(t, err)
	for name, data := range map[string][]byte{
		"rules.yaml": yamlData,
		"rules.yml":  yamlData,
		"rules":      yamlData,
		"rules.json": jsonData,
		"RULES.JSON": jsonData,
	} {
		path := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(path, data, 0o600))
		rules, err := Load(path)
		require.NoError(t, err, name)
		assert.Equal(t, exampleRules, rules, name)
	}

	t.Run("problems", func(t *testing.T) {
		path := filepath.Join(dir, "bad.yaml")
		require.NoError(t, os.WriteFile(path, []byte("rules:\n  - {resource: x, kind: flow, limit: -5}\n"), 0o600))
		_, err := Load(path)
		assert.EqualError(t, err, "rules file "+path+": rules[0]: line 2: limit must be >= 0, got -5")
		var re *core.RulesError
		assert.ErrorAs(t, err, &re)
	})
	t.Run("JSON by extension", func(t *testing.T) {
		path := filepath.Join(dir, "yaml-in.json")
		require.NoError(t, os.WriteFile(path, []byte("rules: []\n"), 0o600))
		_, err := Load(path)
		require.Error(t, err)
		assert.Contains(t, err.Error(), path)
		assert.Contains(t, err.Error(), "invalid character")
	})
	t.Run("missing", func(t *testing.T) {
		path := filepath.Join(dir, "missing.yaml")
		_, err := Load(path)
		require.Error(t, err)
		assert.ErrorIs(t, err, fs.ErrNotExist)
		assert.True(t, strings.HasPrefix(err.Error(), "rules file "+path+": "), err.Error())
	})
	t.Run("too large", func(t *testing.T) {
		path := filepath.Join(dir, "big.json")
		require.NoError(t, os.WriteFile(path, make([]byte, maxFileSize+1), 0o600))
		_, err := Load(path)
		assert.EqualError(t, err, "rules file "+path+": a rules file must be at most 16 MiB (16777216 bytes), got more")
		path = filepath.Join(dir, "big.yaml")
		require.NoError(t, os.WriteFile(path, make([]byte, maxYAMLSize+1), 0o600))
		_, err = Load(path)
		assert.EqualError(t, err, "rules file "+path+": a YAML rules file must be at most 512 KiB (524288 bytes), got more; a larger rule set goes in a JSON file (up to 16 MiB)")
	})
}

// TestParseNoRules: a file with no rules applies only when it says
// so with an empty list; an empty file, one of comments only, or a bare
// "rules:" is what a file cut short looks like, and is refused.
func TestParseNoRules(t *testing.T) {
	for _, tc := range []struct {
		format fileFormat
		data   string
	}{
		{formatYAML, "rules: []\n"},
		{formatYAML, "# no rules yet\nrules: [ ]   # none\n"},
		{formatYAML, "{rules: []}"},
		{formatJSON, `{"rules": []}`},
	} {
		rules, err := parse([]byte(tc.data), tc.format)
		require.NoError(t, err, "%q", tc.data)
		assert.Empty(t, rules, "%q", tc.data)
	}
	const empty = `rules is missing: the file is empty (it may have been cut short); a rules file with no rules says so with "rules: []"`
	for _, tc := range []struct {
		format fileFormat
		data   string
		want   string
	}{
		{formatYAML, "", empty},
		{formatYAML, "\n  \n", empty},
		{formatYAML, "# no rules yet\n", empty},
		{formatYAML, "---\n", empty},
		{formatYAML, "~\n", empty},
		{formatYAML, "{}", `line 1: rules is missing; a rules file with no rules says so with "rules: []"`},
		{formatYAML, "rules:\n", `line 1: rules must be a list of rules, got null (the file may have been cut short); a rules file with no rules says so with "rules: []"`},
		{formatYAML, "rules: # all of them\n", `line 1: rules must be a list of rules, got null (the file may have been cut short); a rules file with no rules says so with "rules: []"`},
		{formatYAML, "rules: null\n", `line 1: rules must be a list of rules, got null (the file may have been cut short); a rules file with no rules says so with "rules: []"`},
		{formatJSON, "", empty},
		{formatJSON, " \n\t", empty},
		{formatJSON, "null", empty},
		{formatJSON, "{}", `line 1: rules is missing; a rules file with no rules says so with "rules: []"`},
		{formatJSON, `{"rules": null}`, `line 1: rules must be a list of rules, got null (the file may have been cut short); a rules file with no rules says so with "rules: []"`},
	} {
		rules, err := parse([]byte(tc.data), tc.format)
		assert.Nil(t, rules)
		assert.Equal(t, []string{tc.want}, problemLines(t, err), "%q", tc.data)
	}
}

func TestParseValueForms(t *testing.T) {
	rules, err := parse([]byte(`
rules:
  - name: 2024              # any scalar is text
    resource: GET /a
    kind: flow
    limit: 0x10
    window: 0               # the integer 0 is a duration
    algorithm: token-bucket
    burst: 1_000
    warmup: null            # null: left zero
    maxWait: ~
  - resource: "*"
    kind: hotspot
    param: ip
    window: 1m30s
    limit: 3
    maxKeys: +7
    overrides: {123: 1, true: 2, null: 4, é: 0}
`), formatYAML)
	require.NoError(t, err)
	assert.Equal(t, []core.Rule{
		{Name: "2024", Resource: "GET /a", Kind: core.KindFlow, Limit: 16, Window: time.Second, Algorithm: "token-bucket", Burst: 1000},
		{Name: "hotspot:*:ip", Resource: "*", Kind: core.KindHotspot, Param: "ip", Limit: 3, Window: 90 * time.Second, Algorithm: "token-bucket", MaxKeys: 7,
			Overrides: map[string]int64{"123": 1, "true": 2, "null": 4, "é": 0}},
	}, rules)
}

func TestParseProblems(t *testing.T) {
	for _, tc := range []struct {
		name   string
		format fileFormat
		data   string
		want   []string
	}{
		{"negative limit", formatYAML, `
rules:
  - {resource: a, kind: concurrency, limit: 1}
  - {resource: b, kind: concurrency, limit: 1}
  - name: per-user
    resource: "*"
    kind: hotspot
    param: header:X-User-ID
    limit: -5
`, []string{"rules[2] (per-user): line 9: limit must be >= 0, got -5"}},
		{"unknown field", formatYAML, `
rules:
  - resource: a
    kind: flow
    limt: 5
    color: red
`, []string{
			`rules[0]: line 5: unknown field "limt" (did you mean "limit"?)`,
			`rules[0]: line 6: unknown field "color"`,
			`rules[0]: line 3: limit is required for kind flow (limit: 0 blocks every request)`,
		}},
		{"closest field", formatYAML, "rules:\n  - {resource: a, kind: flow, limit: 1, windw: 1s, brst: 2}\n", []string{
			`rules[0]: line 2: unknown field "windw" (did you mean "window"?)`,
			`rules[0]: line 2: unknown field "brst" (did you mean "burst"?)`,
		}},
		{"unknown field JSON", formatJSON, `{"rules": [{"resource": "a", "kind": "flow", "limit": 1, "maxwait": "1s"}]}`, []string{
			`rules[0]: line 1: unknown field "maxwait" (did you mean "maxWait"?)`,
		}},
		{"unknown kind", formatYAML, "rules:\n  - {resource: a, kind: bulkhead}\n", []string{
			`rules[0]: line 2: kind must be flow, concurrency, hotspot, breaker, adaptive or system, got "bulkhead"`,
		}},
		{"breaker threshold not a number", formatYAML, "rules:\n  - {resource: a, kind: breaker, strategy: error-ratio, threshold: half}\n", []string{
			`rules[0]: line 2: threshold must be a number, got "half"`,
		}},
		{"breaker threshold JSON", formatJSON, `{"rules": [{"resource": "a", "kind": "breaker", "strategy": "error-count", "threshold": 2.5}]}`, []string{
			`rules[0]: line 1: threshold must be a whole number of errors >= 1 with strategy error-count, got 2.5`,
		}},
		{"threshold not finite", formatYAML, "rules:\n  - {resource: a, kind: breaker, strategy: error-ratio, threshold: .nan}\n  - {resource: b, kind: breaker, strategy: error-ratio, threshold: -.inf}\n", []string{
			`rules[0]: line 2: threshold must be a number, got .nan`,
			`rules[1]: line 3: threshold must be a number, got -.inf`,
		}},
		{"threshold not finite JSON", formatJSON, `{"rules": [{"resource": "a", "kind": "breaker", "strategy": "error-ratio", "threshold": 1e400}]}`, []string{
			`rules[0]: line 1: threshold must be a number, got 1e400`,
		}},
		{"unknown flow algorithm", formatYAML, "rules:\n  - {resource: a, kind: flow, limit: 1, algorithm: gcra}\n", []string{
			`rules[0]: line 2: algorithm unknown algorithm "gcra" (want one of [leap-array fixed-window sliding-log sliding-counter token-bucket leaky-bucket])`,
		}},
		{"unknown hotspot algorithm", formatYAML, "rules:\n  - {resource: a, kind: hotspot, param: ip, limit: 1, algorithm: leap-array}\n", []string{
			`rules[0]: line 2: algorithm unknown algorithm "leap-array" (want one of [token-bucket leaky-bucket concurrency])`,
		}},
		{"bad duration", formatYAML, "rules:\n  - name: x\n    resource: a\n    kind: flow\n    limit: 1\n    window: abc\n    maxWait: 5\n    warmup: [1s]\n", []string{
			`rules[0] (x): line 6: window must be a Go duration such as 1s or 250ms, got "abc"`,
			`rules[0] (x): line 7: maxWait must be a Go duration such as 1s or 250ms, got 5`,
			`rules[0] (x): line 8: warmup must be a Go duration such as 1s or 250ms, got a list`,
		}},
		{"negative duration", formatJSON, `{"rules": [{"resource": "a", "kind": "flow", "limit": 1, "window": "-1s"}]}`, []string{
			`rules[0]: line 1: window must be > 0, got -1s`,
		}},
		{"not integers", formatYAML, "rules:\n  - name: x\n    resource: a\n    kind: flow\n    limit: ten\n    buckets: 1.5\n    burst: true\n    coldFactor: \"3\"\n", []string{
			`rules[0] (x): line 5: limit must be an integer, got "ten"`,
			`rules[0] (x): line 6: buckets must be an integer, got 1.5`,
			`rules[0] (x): line 7: burst must be an integer, got true`,
			`rules[0] (x): line 8: coldFactor must be an integer, got "3"`,
		}},
		{"shadow not a boolean", formatYAML, "rules:\n  - {resource: a, kind: flow, limit: 1, shadow: yes}\n  - {resource: b, kind: flow, limit: 1, shadow: 1}\n", []string{
			`rules[0]: line 2: shadow must be true or false, got "yes"`,
			`rules[1]: line 3: shadow must be true or false, got 1`,
		}},
		{"float limit JSON", formatJSON, "{\"rules\": [\n{\"resource\": \"a\", \"kind\": \"flow\",\n \"limit\": 1.5}]}", []string{
			`rules[0]: line 3: limit must be an integer, got 1.5`,
		}},
		{"integer overflow", formatJSON, `{"rules": [{"resource": "a", "kind": "flow", "limit": 1e30, "algorithm": "token-bucket", "burst": 9223372036854775808}]}`, []string{
			`rules[0]: line 1: limit must be an integer, got 1e30`,
			`rules[0]: line 1: burst must be <= 9223372036854775807, got 9223372036854775808`,
		}},
		{"duplicate name", formatYAML, `
rules:
  - {name: a, resource: x, kind: concurrency, limit: 1}
  - {name: b, resource: x, kind: concurrency, limit: 1}
  - {name: a, resource: y, kind: concurrency, limit: 1}
`, []string{`rules[2] (a): line 5: name "a" is already used by rules[0]`}},
		{"duplicate key", formatYAML, "rules:\n  - resource: x\n    kind: flow\n    limit: 1\n    limit: 2\n", []string{
			`rules[0]: line 5: key "limit" is set twice (first on line 4)`,
		}},
		{"duplicate key JSON", formatJSON, `{"rules": [{"resource": "x", "kind": "flow", "limit": 1, "kind": "flow"}]}`, []string{
			`rules[0]: line 1: key "kind" is set twice (first on line 1)`,
		}},
		{"burst with leap-array", formatYAML, "rules:\n  - {resource: x, kind: flow, limit: 1, burst: 5}\n", []string{
			`rules[0]: line 2: burst only applies to algorithm token-bucket, got 5 with leap-array`,
		}},
		{"maxWait with token-bucket", formatYAML, "rules:\n  - {resource: x, kind: hotspot, param: ip, limit: 1, maxWait: 1s}\n", []string{
			`rules[0]: line 2: maxWait only applies to algorithm leaky-bucket, got 1s with token-bucket`,
		}},
		{"window on concurrency", formatYAML, "rules:\n  - {resource: x, kind: concurrency, limit: 1, window: 1s}\n", []string{
			`rules[0]: line 2: window does not apply to kind concurrency (only to kinds flow, hotspot, breaker and adaptive)`,
		}},
		{"bad param prefix", formatYAML, "rules:\n  - {resource: x, kind: hotspot, limit: 1, param: \"hdr:X-User\"}\n", []string{
			`rules[0]: line 2: param has unknown kind "hdr" in "hdr:X-User" (want header, query, cookie, path or metadata)`,
		}},
		{"negative override", formatYAML, "rules:\n  - {resource: x, kind: hotspot, param: ip, limit: 1, overrides: {abuser: -1}}\n", []string{
			`rules[0]: line 2: overrides value for "abuser" must be >= 0, got -1`,
		}},
		{"bad overrides", formatYAML, "rules:\n  - resource: x\n    kind: hotspot\n    param: ip\n    limit: 1\n    overrides:\n      a: x\n      [b]: 1\n      c: 1\n      c: 2\n", []string{
			`rules[0]: line 7: overrides value for "a" must be an integer, got "x"`,
			`rules[0]: line 8: overrides keys must be param values, got a list`,
			`rules[0]: line 10: overrides key "c" is set twice (first on line 9)`,
		}},
		{"empty override key", formatYAML, "rules:\n  - {resource: x, kind: hotspot, param: ip, limit: 1, overrides: {\"\": 1}}\n", []string{
			`rules[0]: line 2: overrides keys must not be empty`,
		}},
		{"overrides not a mapping", formatJSON, `{"rules": [{"resource": "x", "kind": "hotspot", "param": "ip", "limit": 1, "overrides": [1]}]}`, []string{
			`rules[0]: line 1: overrides must be a mapping of param values to limits, got a list`,
		}},
		{"empty resource", formatYAML, "rules:\n  - {resource: \"\", kind: flow, limit: 1}\n", []string{
			`rules[0]: line 2: resource is required`,
		}},
		{"string fields", formatYAML, "rules:\n  - resource: {a: 1}\n    kind: [flow]\n", []string{
			`rules[0]: line 2: resource must be a string, got a mapping`,
			`rules[0]: line 3: kind must be a string, got a list`,
		}},
		{"rules not a list", formatYAML, "rules:\n  resource: x\n", []string{
			`line 2: rules must be a list of rules, got a mapping`,
		}},
		{"rules a string JSON", formatJSON, `{"rules": "all"}`, []string{
			`line 1: rules must be a list of rules, got "all"`,
		}},
		{"rule not a mapping", formatYAML, "rules:\n  - {resource: x, kind: concurrency, limit: 1}\n  - concurrency *\n  - [a]\n", []string{
			`rules[1]: line 3: a rule must be a mapping of fields such as resource and kind, got "concurrency *"`,
			`rules[2]: line 4: a rule must be a mapping of fields such as resource and kind, got a list`,
		}},
		{"unknown top-level key", formatYAML, "version: 2\nrules: []\n", []string{
			`line 1: unknown top-level key "version" (a rules file has the one key rules)`,
		}},
		{"top level a list", formatYAML, "- resource: x\n  kind: flow\n", []string{
			`line 1: a rules file must be a mapping with the one key rules, got a list`,
		}},
		{"top level a scalar JSON", formatJSON, `"rules"`, []string{
			`line 1: a rules file must be a mapping with the one key rules, got "rules"`,
		}},
		{"rules twice", formatYAML, "rules: []\nrules: []\n", []string{
			`line 2: key "rules" is set twice (first on line 1)`,
		}},
		{"JSON trailing garbage", formatJSON, "{\"rules\": []}\n}", []string{
			`line 2: unexpected data after the top-level JSON value`,
		}},
		{"JSON second value", formatJSON, "{\"rules\": []} {}", []string{
			`line 1: unexpected data after the top-level JSON value`,
		}},
		{"JSON syntax", formatJSON, "{\"rules\": [\n{\"resource\" \"x\"}]}", []string{
			`line 2: invalid character '"' after object key`,
		}},
		{"JSON truncated", formatJSON, `{"rules": [{"resource": "x"`, []string{
			`unexpected end of JSON input`,
		}},
		{"JSON too deep", formatJSON, `{"rules": [{"limit": ` + strings.Repeat("[", 100), []string{
			`line 1: values are nested more than 64 levels deep`,
		}},
		{"YAML syntax", formatYAML, "rules:\n  - resource: x\n    kind: flow: x\n", []string{
			`line 3: yaml: mapping values are not allowed in this context, at column 15`,
		}},
		{"YAML indentation", formatYAML, "rules:\n  - resource: x\n    kind: flow\n   limit: 5\n", []string{
			`line 4: yaml: did not find expected '-' indicator, at column 4`, // the parser said line 1
		}},
		{"YAML tab", formatYAML, "rules:\n  - resource: x\n\tkind: flow\n", []string{
			`line 3: yaml: found a tab character that violates indentation, at column 1`, // line 2
		}},
		{"YAML quote", formatYAML, "rules:\n  - resource: x\n    kind: flow\n    limit: 5\n  - resource: \"GET /a\n    kind: flow\n", []string{
			`line 5: yaml: found unexpected end of stream, at column 15`,
		}},
		{"YAML character", formatYAML, "rules:\n  - resource: x\n    kind: flow\n  @limit: 5\n", []string{
			`line 4: yaml: found character that cannot start any token, at column 3`,
		}},
		{"YAML flow", formatYAML, "rules:\n  - resource: x\n    kind: [flow\n    limit: 5\n", []string{
			`line 3: yaml: did not find expected ',' or ']', at column 12`, // line 2; the list starts on line 3
		}},
		{"YAML second document", formatYAML, "rules: []\n---\nrules: []\n", []string{
			`line 2: a rules file must be one YAML document, found a second`,
		}},
		{"YAML alias", formatYAML, "base: &b {resource: x, kind: flow, limit: 1}\nrules:\n  - *b\n  - resource: y\n    kind: flow\n    limit: &n 5\n    burst: *n\n", []string{
			`line 1: unknown top-level key "base" (a rules file has the one key rules)`,
			`rules[0]: line 3: a rule must be a mapping of fields such as resource and kind, got the alias *b (rules files do not support YAML aliases)`,
			`rules[1]: line 7: burst must be an integer, got the alias *n (rules files do not support YAML aliases)`,
		}},
		{"empty values", formatYAML, "rules:\n  - name: x\n    resource: a\n    kind: hotspot\n    param: ip\n    limit: 1\n    window:\n    maxKeys: ~\n    overrides:\n", []string{
			`rules[0] (x): line 7: window has no value (the file may have been cut short); give one, or remove the key`,
			`rules[0] (x): line 9: overrides has no value (the file may have been cut short); give one, or remove the key`,
		}},
		{"no limit", formatYAML, "rules:\n  - name: x\n    resource: a\n    kind: flow\n  - {resource: b, kind: concurrency, limit: null}\n  - {resource: c, kind: breaker, strategy: error-count, threshold: 5}\n", []string{
			`rules[0] (x): line 2: limit is required for kind flow (limit: 0 blocks every request)`,
			`rules[1]: line 5: limit must be a number for kind concurrency, got null (limit: 0, written out, blocks every request)`,
		}},
		{"cut in the middle of a value", formatYAML, "rules:\n  - name: x\n    resource: a\n    kind: flow\n    limit: 1", []string{
			`line 5: the file ends without a line break after "    limit: 1": it may have been cut short in the middle of a value; end it with a line break`,
		}},
		{"cut in a comment", formatYAML, "rules: [] # non", []string{
			`line 1: the file ends without a line break after "rules: [] # non": it may have been cut short in the middle of a value; end it with a line break`,
		}},
		{"YAML merge key", formatYAML, "rules:\n  - <<: {resource: x}\n    kind: flow\n    limit: 1\n", []string{
			`rules[0]: line 2: unknown field "<<"`,
			`rules[0]: line 2: resource is required`,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rules, err := parse([]byte(tc.data), tc.format)
			assert.Nil(t, rules)
			assert.Equal(t, tc.want, problemLines(t, err))
		})
	}
}

func TestParseAllProblemsInOrder(t *testing.T) {
	data := `
rules:
  - name: items
    resource: GET /items
    kind: flow
    limit: -1
    algorithm: token-bucket
    maxWait: 1s
    limt: 3
  - name: items
    resource: ""
    kind: hotspot
    param: bogus:x
    limit: many
    overrides: {vip: -3, alice: 1.5}
  - resource: "*"
    kind: concurrency
    window: abc
    buckets: 4
  - 42
  - name: fine
    resource: /x
    kind: concurrency
    limit: 1
`
	_, err := parse([]byte(data), formatYAML)
	assert.Equal(t, []string{
		`rules[0] (items): line 9: unknown field "limt" (did you mean "limit"?)`,
		`rules[0] (items): line 6: limit must be >= 0, got -1`,
		`rules[0] (items): line 8: maxWait only applies to algorithm leaky-bucket, got 1s with token-bucket`,
		`rules[1] (items): line 10: name "items" is already used by rules[0]`,
		`rules[1] (items): line 11: resource is required`,
		`rules[1] (items): line 14: limit must be an integer, got "many"`,
		`rules[1] (items): line 13: param has unknown kind "bogus" in "bogus:x" (want header, query, cookie, path or metadata)`,
		`rules[1] (items): line 15: overrides value for "alice" must be an integer, got 1.5`,
		`rules[1] (items): line 15: overrides value for "vip" must be >= 0, got -3`,
		`rules[2]: line 16: limit is required for kind concurrency (limit: 0 blocks every request)`,
		`rules[2]: line 18: window must be a Go duration such as 1s or 250ms, got "abc"`,
		`rules[2]: line 19: buckets does not apply to kind concurrency (only to kinds flow and breaker)`,
		`rules[3]: line 20: a rule must be a mapping of fields such as resource and kind, got 42`,
	}, problemLines(t, err))
}

// TestProblemsOfUnreadRules gives 600 rules that are not mappings, whose
// zero values core finds more than 1,000 problems in: Parse, Load, NewGuard
// list the 600, then say there are more (Rules, which does not validate,
// lists the 600). Before, merging the two
// lists panicked (a 3 KB file killed a server reloading it).
func TestProblemsOfUnreadRules(t *testing.T) {
	const n = 600
	for _, format := range []fileFormat{formatJSON, formatYAML} {
		data := []byte(`{"rules": [` + strings.Repeat("[1],\n", n-1) + "[1]]}\n")
		path := filepath.Join(t.TempDir(), map[fileFormat]string{formatJSON: "rules.json", formatYAML: "rules.yaml"}[format])
		require.NoError(t, os.WriteFile(path, data, 0o600))
		_, perr := parse(data, format)
		_, lerr := Load(path)
		_, gerr := NewGuard(path)
		var rs Rules
		rerr := yaml.Unmarshal(data, &struct{ Rules *Rules }{&rs})
		if format == formatJSON {
			rerr = json.Unmarshal(data, &struct{ Rules *Rules }{&rs})
		}
		for i, err := range []error{perr, lerr, gerr, rerr} {
			lines := problemLines(t, err)
			assert.Equal(t, "rules[599]: line 600: a rule must be a mapping of fields such as resource and kind, got a list", lines[n-1])
			if i == 3 { // Rules does not validate
				assert.Len(t, lines, n, "format %d", format)
				continue
			}
			require.Len(t, lines, n+1, "format %d", format)
			assert.Equal(t, "there are more problems, not listed: at most 1000 are", lines[n])
		}
	}
}

func TestParseLimits(t *testing.T) {
	t.Run("size", func(t *testing.T) {
		_, err := parse(make([]byte, maxFileSize+1), formatJSON)
		assert.Equal(t, []string{"a rules file must be at most 16 MiB (16777216 bytes), got more"}, problemLines(t, err))
	})
	t.Run("rule count", func(t *testing.T) {
		data := "rules:\n" + strings.Repeat("- {}\n", maxRules+1)
		_, err := parse([]byte(data), formatYAML)
		assert.Equal(t, []string{"line 100002: rules must hold at most 100000 rules, got more: rules[100000] starts on this line"}, problemLines(t, err))
	})
	t.Run("most rules", func(t *testing.T) {
		data := `{"rules": [` + strings.Repeat(`{"resource": "x", "kind": "concurrency", "limit": 1},`, maxRules-1) + `{"resource": "x", "kind": "concurrency", "limit": 1}]}`
		rules, err := parse([]byte(data), formatJSON)
		require.NoError(t, err)
		require.Len(t, rules, maxRules)
		assert.Equal(t, "concurrency:x#100000", rules[maxRules-1].Name)
	})
	t.Run("format", func(t *testing.T) {
		_, err := parse(nil, fileFormat(7))
		assert.Equal(t, []string{"unknown rules file format 7"}, problemLines(t, err))
	})
	t.Run("YAML nesting", func(t *testing.T) {
		_, err := parse([]byte("rules: "+strings.Repeat("[", 20000)), formatYAML)
		assert.Equal(t, []string{"line 1: yaml: exceeded max depth of 10000, at column 10008"}, problemLines(t, err))
	})
}

func TestParseErrorsAreRulesErrors(t *testing.T) {
	_, err := parse([]byte("{"), formatJSON)
	var re *core.RulesError
	require.True(t, errors.As(err, &re))
	assert.Equal(t, -1, re.Problems[0].Index)
}

// TestParseRefusesFilesCutShort cuts every rules file of testdata at
// every byte, as a reader racing a writer, a full disk or a crash leaves
// it, and parses each prefix. The promise (see Parse):
//   - a JSON file cut anywhere is refused;
//   - a YAML file cut in the middle of a line is refused: in a value
//     ("limit: 1" for "limit: 100") or a comment, after a key, after "- ",
//     before the limit of a rule, or to nothing;
//   - a YAML file cut at a line break, or right after a closing quote or
//     bracket, may parse (a shorter file cannot be told from a cut one),
//     but then every rule it has keeps the name, resource, kind and limit
//     the whole file gives it: a cut can leave out rules, or fields
//     written after the limit, and change no limit.
//
// The same holds for a prefix followed by zero bytes, as a crash can leave
// a file whose size was written before its data.
func TestParseRefusesFilesCutShort(t *testing.T) {
	for _, file := range testdataRulesFiles(t) {
		if strings.Contains(file, "invalid") {
			continue
		}
		data, err := os.ReadFile(file)
		require.NoError(t, err)
		format := formatOf(file)
		whole, err := parse(data, format)
		require.NoError(t, err, file)
		complete := len(bytes.TrimRight(data, " \t\r\n"))
		var accepted, refused int
		for cut := range complete {
			prefix := data[:cut]
			_, err := parse(append(slices.Clip(prefix), 0, 0, 0, 0), format)
			require.Error(t, err, "%s cut at byte %d, then zeros", file, cut)
			rules, err := parse(prefix, format)
			if err != nil {
				refused++
				continue
			}
			accepted++
			require.Equal(t, formatYAML, format, "%s: a JSON file cut at byte %d parsed", file, cut)
			// A cut in the indentation of a line is one at its start; one
			// right after a closing quote or bracket leaves the value whole.
			end := bytes.TrimRight(prefix, " ")
			require.True(t, len(end) == 0 || bytes.ContainsAny(end[len(end)-1:], "\n\"']}"), "%s cut at byte %d, in the middle of line %q, parsed",
				file, cut, prefix[bytes.LastIndexByte(prefix, '\n')+1:])
			require.LessOrEqual(t, len(rules), len(whole))
			for i, r := range rules {
				w := whole[i]
				require.Equal(t, []any{w.Name, w.Resource, w.Kind, w.Limit}, []any{r.Name, r.Resource, r.Kind, r.Limit},
					"%s cut at byte %d (line %d) changed rules[%d]", file, cut, 1+bytes.Count(prefix, []byte{'\n'}), i)
			}
		}
		require.NotZero(t, refused)
		t.Logf("%s: %d cuts refused, %d (at a line break or a closing quote) parsed as a shorter file", file, refused, accepted)
	}
}

// testdataRulesFiles returns the rules files of testdata: valid ones, and
// those meant to be invalid, named *invalid*.
func testdataRulesFiles(t testing.TB) []string {
	files, err := filepath.Glob("testdata/*rules*")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	return files
}

// TestJSONRulesOver checks where the JSON count finds rules[maxRules]: in
// the rules list only, whatever its neighbours, in each list of a key set
// twice, and never past a syntax error.
func TestJSONRulesOver(t *testing.T) {
	items := func(n int) string { return strings.Repeat(`{"a": [{}, "]"]},`, n) + `"last"` }
	for _, tc := range []struct {
		data string
		want int
	}{
		{`{"rules": [` + items(maxRules-1) + `]}`, 0},
		{`{"rules": [` + items(maxRules) + `]}`, 1},
		{"{\n\"rules\": [\n" + strings.Repeat("{},\n", maxRules) + "{}]}", maxRules + 3},
		{`{"other": [` + items(maxRules) + "], \"x\": {\"rules\": [" + items(maxRules) + "]},\n\"rules\": [" + items(maxRules) + `]}`, 2},
		{`{"rules": [` + items(10) + "],\n\"rules\": {\"a\": [1]},\n\"rules\": [" + items(maxRules) + `]}`, 3},
		{`[` + items(maxRules) + `]`, 0},
		{`{"rules": [` + items(maxRules/2) + `]]}[` + items(maxRules) + `]`, 0},
		{`]}[`, 0},
		{`{"rules": ]}[`, 0},
	} {
		_, over := jsonRulesCount([]byte(tc.data))
		assert.Equal(t, tc.want, over, "%.60q", tc.data)
	}
}

// tooManyRules returns a rules file of about 15 MB, in format, holding more
// than twice as many rules as a file may.
func tooManyRules(format fileFormat) []byte {
	var b bytes.Buffer
	if format == formatJSON {
		b.WriteString(`{"rules": [`)
		for i := 0; b.Len() < 15<<20; i++ {
			fmt.Fprintf(&b, "\n{\"name\": \"r%06d\", \"resource\": \"GET /r%d\", \"kind\": \"flow\", \"limit\": 5},", i, i)
		}
		b.WriteString("\n{\"resource\": \"*\", \"kind\": \"flow\", \"limit\": 5}]}\n")
		return b.Bytes()
	}
	b.WriteString("rules:\n")
	for i := 0; b.Len() < 15<<20; i++ {
		fmt.Fprintf(&b, "  - {name: r%06d, resource: \"GET /r%d\", kind: flow, limit: 5}\n", i, i)
	}
	return b.Bytes()
}

// TestLoadTooManyRules loads a 15 MB file of 200,000 rules and more: it
// is refused, after reading at most the size limit of its format and
// without parsing it: a JSON file names the line of the first rule over the
// limit (its rules are counted as it is read); a YAML file, beyond the 512
// KiB YAML files may hold, is refused for its size. The memory it
// allocates is measured (runtime.MemStats), not its time: it stays below
// twice the size of the file, and for YAML below twice its size limit
// (parsing the file took 30 times its size, 448 MB).
func TestLoadTooManyRules(t *testing.T) {
	for _, format := range []fileFormat{formatYAML, formatJSON} {
		path := filepath.Join(t.TempDir(), "rules.yaml")
		if format == formatJSON {
			path = filepath.Join(t.TempDir(), "rules.json")
		}
		data := tooManyRules(format)
		require.NoError(t, os.WriteFile(path, data, 0o600))
		line := maxRules + 2 // the JSON "{"rules": [", then one rule a line
		want := fmt.Sprintf("rules file %s: line %d: rules must hold at most 100000 rules, got more: rules[100000] starts on this line", path, line)
		bound := uint64(2 * len(data))
		if format == formatYAML {
			want = fmt.Sprintf("rules file %s: a YAML rules file must be at most 512 KiB (524288 bytes), got more; a larger rule set goes in a JSON file (up to 16 MiB)", path)
			bound = 2 * maxYAMLSize
		}

		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		_, err := Load(path)
		runtime.ReadMemStats(&after)
		assert.EqualError(t, err, want)
		allocated := after.TotalAlloc - before.TotalAlloc
		t.Logf("format %d: a file of %d bytes refused after allocating %d bytes", format, len(data), allocated)
		assert.Less(t, allocated, bound)

		_, err = parse(data, format)
		assert.EqualError(t, err, strings.TrimPrefix(want, "rules file "+path+": "))
	}
}

// yamlWorstShapes are YAML rules files of nearly 512 KiB, the most a YAML
// file may hold, of the shapes whose node trees cost the most memory per
// byte of text: lists and mappings of one-character values, and rules
// lists of empty rules, beyond the rule count limit.
func yamlWorstShapes() map[string][]byte {
	fill := func(head, item, tail string) []byte {
		n := (maxYAMLSize - len(head) - len(tail)) / len(item)
		return []byte(head + strings.Repeat(item, n) + tail)
	}
	return map[string][]byte{
		"flow list in a rule":  fill("rules:\n  - {resource: x, kind: flow, limit: 1, tags: [", "1,", "1]}\n"),
		"flow mapping":         fill("rules:\n  - {resource: x, kind: hotspot, limit: 1, overrides: {", "a: 1,", "b: 1}}\n"),
		"block list in a rule": fill("rules:\n  - resource: x\n    tags:\n", "    - 1\n", ""),
		"flow rules list":      fill("rules: [", "1,", "1]\n"),
		"block rules list":     fill("rules:\n", "- {}\n", ""),
	}
}

// TestYAMLMemoryBound parses YAML files of the most a YAML file may hold,
// in the shapes that cost the most memory (yamlWorstShapes): each is
// refused after allocating at most 256 times the size limit, 128 MiB
// (measured: up to 186 times, 93 MiB, a flow mapping of one key repeated;
// 203 times with -race). Before,
// YAML files could hold 16 MiB: a 16 MiB flow list allocated about 2 GB,
// one of 4 MiB (refused now for its size) 500 MB.
func TestYAMLMemoryBound(t *testing.T) {
	shapes := yamlWorstShapes()
	shapes["4 MiB flow list"] = []byte("rules: [" + strings.Repeat("1,", 2<<20) + "1]\n")
	for name, data := range shapes {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		_, err := parse(data, formatYAML)
		runtime.ReadMemStats(&after)
		require.Error(t, err, name)
		allocated := after.TotalAlloc - before.TotalAlloc
		t.Logf("%s: %d bytes refused after allocating %d bytes (%.0fx)", name, len(data), allocated, float64(allocated)/float64(len(data)))
		assert.LessOrEqual(t, allocated, uint64(256*maxYAMLSize), name)
	}
}

// BenchmarkParseTooMany measures how much a 15 MB file of 200,000
// rules and more costs to refuse.
func BenchmarkParseTooMany(b *testing.B) {
	for _, format := range []fileFormat{formatYAML, formatJSON} {
		b.Run([]string{"YAML", "JSON"}[format], func(b *testing.B) {
			data := tooManyRules(format)
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := parse(data, format); err == nil {
					b.Fatal("accepted")
				}
			}
		})
	}
}

// problemLines returns the problems of err, a *core.RulesError, as text.
func problemLines(t *testing.T, err error) []string {
	t.Helper()
	var re *core.RulesError
	require.True(t, errors.As(err, &re), "want a *core.RulesError, got %T: %v", err, err)
	lines := make([]string, len(re.Problems))
	for i, p := range re.Problems {
		lines[i] = p.Error()
	}
	assert.Equal(t, strings.Join(lines, "\n"), re.Error())
	return lines
}

// TestDescribe pins how problems show values: strings, and scalars that
// would need escapes, quoted and cut at 64 bytes; numbers, booleans and
// null as written, cut likewise; lists, mappings and aliases by kind.
func TestDescribe(t *testing.T) {
	long := strings.Repeat("7", 70)
	for _, tc := range []struct {
		node yaml.Node
		want string
	}{
		{yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: "42"}, "42"},
		{yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: long}, long[:64] + "..."},
		{yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "42"}, `"42"`},
		{yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: long}, `"` + long[:64] + `"...`},
		{yaml.Node{Kind: yaml.ScalarNode, Tag: "!!float", Value: "1e400"}, "1e400"},
		{yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: "true"}, "true"},
		{yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "~"}, "null"},
		{yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: "1\t2"}, `"1\t2"`},
		{yaml.Node{Kind: yaml.ScalarNode, Tag: "!!float", Value: `1\2`}, `"1\\2"`},
		{yaml.Node{Kind: yaml.ScalarNode, Tag: "!custom", Value: "x\xff"}, `"x\xff"`},
		{yaml.Node{Kind: yaml.ScalarNode, Tag: "!custom", Value: "é"}, "é"},
		{yaml.Node{Kind: yaml.SequenceNode}, "a list"},
		{yaml.Node{Kind: yaml.MappingNode}, "a mapping"},
		{yaml.Node{Kind: yaml.AliasNode, Value: "r"}, "the alias *r (rules files do not support YAML aliases)"},
		{yaml.Node{}, "nothing"},
	} {
		assert.Equal(t, tc.want, describe(&tc.node), "%+v", tc.node)
	}
}
