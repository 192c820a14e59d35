package rulesfile

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/breaker"
	"github.com/sluicekit/sluice/core/store"
)

// allFieldRules are valid rules that set, between them, every field of
// Rule, with each kind and algorithm family. Enumerated fields take typed
// constants and untyped string literals alike.
func allFieldRules() []core.Rule {
	return []core.Rule{
		{Name: "warm", Resource: "GET /items/{id}", Kind: core.KindFlow, Limit: 100, Window: 1500 * time.Millisecond,
			Algorithm: "leap-array", Buckets: 5, Warmup: 90 * time.Second, ColdFactor: 4},
		{Resource: "POST /items", Kind: core.KindFlow, Limit: 10, Algorithm: core.AlgorithmTokenBucket, Burst: 5},
		{Resource: "*", Kind: core.KindFlow, Limit: 10, Algorithm: "leaky-bucket", MaxWait: 250 * time.Millisecond},
		{Name: "shared", Resource: "/pkg.Svc/*", Kind: core.KindFlow, Limit: 50, Window: time.Minute, Algorithm: "sliding-counter",
			Store: "redis", Mode: store.Approximate, OnFailure: core.FailLocal, LocalLimit: 20},
		{Resource: "GET /slow", Kind: core.KindFlow, Limit: 5, Store: "redis", OnFailure: core.FailClosed},
		{Name: "inflight", Resource: "GET /report", Kind: core.KindConcurrency, Limit: 7},
		{Resource: "GET /off", Kind: core.KindConcurrency, Limit: 0},
		{Name: "per-user", Resource: "GET /items/*", Kind: core.KindHotspot, Limit: 3, Window: 2 * time.Second,
			Algorithm: "leaky-bucket", MaxWait: 100 * time.Millisecond, Param: "header:X-User-ID", MaxKeys: 1000,
			Overrides: map[string]int64{"alice": 0, "123": 50, "true": 2, "a: b": 1}, OnMissing: core.MissingShared},
		{Resource: "*", Kind: core.KindHotspot, Limit: 9, Param: "ip", Store: "redis", OnFailure: core.FailOpen, OnMissing: core.MissingReject},
		{Name: "slow", Resource: "GET /db", Kind: core.KindBreaker, Strategy: breaker.SlowRatio, Threshold: 0.25, MaxRT: 300 * time.Millisecond,
			Window: 20 * time.Second, Buckets: 20, MinRequests: 20, OpenFor: 2 * time.Second, Probes: 3},
		{Resource: "GET /api", Kind: core.KindBreaker, Strategy: "error-count", Threshold: 5},
		{Name: "adaptive", Resource: "GET /api/*", Kind: core.KindAdaptive, MinLimit: 2, MaxLimit: 50, Shadow: true,
			Window: 250 * time.Millisecond, Tolerance: 1.25, ProbeInterval: time.Minute},
		{Resource: "POST /api", Kind: core.KindAdaptive, Priority: "header:X-Priority"},
		{Name: "cpu", Resource: "*", Kind: core.KindSystem, Signal: core.SignalCPU, Threshold: 0.8, Strategy: core.StrategyBBR, Priority: "header:X-Priority"},
		{Resource: "GET /api/*", Kind: core.KindSystem, Signal: core.SignalRT, Threshold: 250},
	}
}

func TestRuleMarshalRoundTrip(t *testing.T) {
	rules := allFieldRules()
	set := map[string]bool{}
	for _, r := range rules {
		v := reflect.ValueOf(r)
		for i := range v.NumField() {
			if !v.Field(i).IsZero() {
				set[v.Type().Field(i).Name] = true
			}
		}
	}
	for i := range reflect.TypeFor[core.Rule]().NumField() {
		f := reflect.TypeFor[core.Rule]().Field(i)
		assert.True(t, set[f.Name], "no rule sets Rule.%s", f.Name)
	}
	want, err := core.NormalizeRules(rules)
	require.NoError(t, err)

	doc := map[string][]core.Rule{"rules": rules}
	for _, tc := range []struct {
		format  fileFormat
		marshal func(any) ([]byte, error)
	}{
		{formatJSON, json.Marshal},
		{formatYAML, yaml.Marshal},
	} {
		data, err := tc.marshal(doc)
		require.NoError(t, err)
		got, err := parse(data, tc.format)
		require.NoError(t, err, "%s", data)
		assert.Equal(t, want, got, "%s", data)
	}
}

func TestRuleMarshalForm(t *testing.T) {
	for _, tc := range []struct {
		rule       core.Rule
		json, yaml string
	}{
		{core.Rule{Resource: "*", Kind: core.KindConcurrency}, `{"resource":"*","kind":"concurrency","limit":0}`,
			"resource: '*'\nkind: concurrency\nlimit: 0\n"},
		{core.Rule{Resource: "GET /x", Kind: core.KindFlow, Limit: 5, Window: 1500 * time.Millisecond, MaxWait: 500 * time.Millisecond, Algorithm: "leaky-bucket"},
			`{"resource":"GET /x","kind":"flow","limit":5,"window":"1.5s","algorithm":"leaky-bucket","maxWait":"500ms"}`,
			"resource: GET /x\nkind: flow\nlimit: 5\nwindow: 1.5s\nalgorithm: leaky-bucket\nmaxWait: 500ms\n"},
		{core.Rule{Resource: "GET /x", Kind: core.KindBreaker, Strategy: "error-ratio", Threshold: 0.5, OpenFor: time.Minute},
			`{"resource":"GET /x","kind":"breaker","strategy":"error-ratio","threshold":0.5,"openFor":"1m0s"}`,
			"resource: GET /x\nkind: breaker\nstrategy: error-ratio\nthreshold: 0.5\nopenFor: 1m0s\n"},
	} {
		j, err := json.Marshal(tc.rule)
		require.NoError(t, err)
		assert.Equal(t, tc.json, string(j))
		pj, err := json.Marshal(&tc.rule)
		require.NoError(t, err)
		assert.Equal(t, tc.json, string(pj), "a *Rule marshals the same")
		y, err := yaml.Marshal(tc.rule)
		require.NoError(t, err)
		assert.Equal(t, tc.yaml, string(y))
	}
}

func TestRulesUnmarshalRoundTrip(t *testing.T) {
	rules := allFieldRules()
	j, err := json.Marshal(rules)
	require.NoError(t, err)
	var fromJSON Rules
	require.NoError(t, json.Unmarshal(j, &fromJSON))
	assert.Equal(t, rules, []core.Rule(fromJSON))
	y, err := yaml.Marshal(rules)
	require.NoError(t, err)
	var fromYAML Rules
	require.NoError(t, yaml.Unmarshal(y, &fromYAML))
	assert.Equal(t, rules, []core.Rule(fromYAML))

	var rs Rules
	err = json.Unmarshal([]byte(`[{"resource":"*","kind":"flow","limit":1},
{"resource":"*","kind":"flow","limit":1,"window":1000000000}]`), &rs)
	assert.EqualError(t, err, "rules[1]: line 2: window must be a Go duration such as 1s or 250ms, got 1000000000")
	err = yaml.Unmarshal([]byte("- resource: '*'\n  kind: flow\n  limt: 1\n"), &rs)
	assert.EqualError(t, err, "rules[0]: line 3: unknown field \"limt\" (did you mean \"limit\"?)\n"+
		"rules[0]: line 1: limit is required for kind flow (limit: 0 blocks every request)")
	err = yaml.Unmarshal([]byte("rules: {}\n"), &struct{ Rules Rules }{})
	assert.EqualError(t, err, "line 1: rules must be a list of rules, got a mapping")
	assert.Nil(t, rs, "a list with problems is not decoded")
}

// TestRuleRefusesToUnmarshal: a core.Rule decoded on its own, by
// encoding/json or YAML, would take a misspelt field for a limit of 0; it
// refuses, and points to Rules.
func TestRuleRefusesToUnmarshal(t *testing.T) {
	var rules []core.Rule
	err := json.Unmarshal([]byte(`[{"resource":"*","kind":"flow","limt":1}]`), &rules)
	assert.ErrorContains(t, err, "rulesfile.Rules")
	err = yaml.Unmarshal([]byte("- resource: '*'\n  kind: flow\n  limt: 1\n"), &rules)
	assert.ErrorContains(t, err, "rulesfile.Rules")
}
