package rulesfile_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/rulesfile"
)

// The rules of each kind, read from files.

func TestBreakerRulesFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rules.yaml")
	require.NoError(t, os.WriteFile(path, []byte(`rules:
  - name: fail-breaker
    resource: "GET /fail"
    kind: breaker
    strategy: error-ratio
    threshold: 0.5
    minRequests: 5
    window: 10s
    buckets: 20
    openFor: 5s
    probes: 2
  - resource: "GET /slow"
    kind: breaker
    strategy: slow-ratio
    threshold: 0.8
    maxRT: 250ms
`), 0o644))
	rules, err := rulesfile.Load(path)
	require.NoError(t, err)
	assert.Equal(t, []core.Rule{
		{Name: "fail-breaker", Resource: "GET /fail", Kind: core.KindBreaker, Strategy: "error-ratio", Threshold: 0.5,
			MinRequests: 5, Window: 10 * time.Second, Buckets: 20, OpenFor: 5 * time.Second, Probes: 2},
		{Name: "breaker:GET:/slow", Resource: "GET /slow", Kind: core.KindBreaker, Strategy: "slow-ratio", Threshold: 0.8,
			MaxRT: 250 * time.Millisecond, MinRequests: 10, Window: 10 * time.Second, Buckets: 10,
			OpenFor: 5 * time.Second, Probes: 1},
	}, rules)
	_, err = rulesfile.NewGuard(path)
	require.NoError(t, err)
}

func TestAdaptiveRulesFile(t *testing.T) {
	rules, err := rulesfile.Load(filepath.Join("testdata", "rules-adaptive.yaml"))
	require.NoError(t, err)
	assert.Equal(t, []core.Rule{
		{Name: "api-adaptive", Resource: "GET /api/*", Kind: core.KindAdaptive, MinLimit: 2, MaxLimit: 200,
			Window: 200 * time.Millisecond, Tolerance: 2, ProbeInterval: time.Minute},
		{Name: "adaptive:POST:/upload", Resource: "POST /upload", Kind: core.KindAdaptive, MinLimit: 2, MaxLimit: 1000,
			Window: 100 * time.Millisecond, Tolerance: 1.5, ProbeInterval: 30 * time.Second},
	}, rules)

	_, err = rulesfile.Load(filepath.Join("testdata", "invalid-rules-adaptive-limit.yaml"))
	assert.ErrorContains(t, err, ": rules[0] (api-adaptive): line 5: limit does not apply to kind adaptive "+
		"(its limit is found from response times; bound it with minLimit and maxLimit)")

	path := filepath.Join(t.TempDir(), "rules.yaml")
	require.NoError(t, os.WriteFile(path, []byte(`rules:
  - resource: "*"
    kind: adaptive
    maxlimit: 10
    minLimit: ten
`), 0o644))
	_, err = rulesfile.Load(path)
	assert.ErrorContains(t, err, `: rules[0]: line 4: unknown field "maxlimit" (did you mean "maxLimit"?)`+"\n"+
		`rules[0]: line 5: minLimit must be an integer, got "ten"`)
}

func TestHotspotRulesFromFile(t *testing.T) {
	g, err := rulesfile.NewGuard("testdata/rules.yaml")
	require.NoError(t, err)
	ctx := context.Background()
	user := func(u string) core.EnterOption {
		return core.WithParams(core.ParamMap{"header:X-User-ID": {u}})
	}
	passed := 0
	for i := 0; i < 30; i++ {
		if e, err := g.Enter(ctx, "GET /items/{id}", user("carol")); err == nil {
			passed++
			e.Exit(nil)
		}
	}
	assert.Equal(t, 15, passed, "limit 10 + burst 5")
	_, err = g.Enter(ctx, "GET /items/{id}", user("abuser"))
	assert.Equal(t, "per-user", blockedBy(t, err).Rule)
}

func TestRulesFileOnMissing(t *testing.T) {
	rules, err := rulesfile.Parse([]byte(`
rules:
  - {name: a, resource: "*", kind: hotspot, param: ip, limit: 1, onMissing: reject}
  - {name: b, resource: "*", kind: hotspot, param: ip, limit: 1, onMissing: shared}
  - {name: c, resource: "*", kind: hotspot, param: ip, limit: 1, onMissing: skip}
  - {name: d, resource: "*", kind: hotspot, param: ip, limit: 1}
`))
	require.NoError(t, err)
	want := []core.OnMissing{core.MissingReject, core.MissingShared, core.MissingSkip, ""}
	for i, r := range rules {
		assert.Equal(t, want[i], r.OnMissing, r.Name)
	}
	// Go values written as JSON and read back: the same rules.
	var values []core.Rule
	for i, m := range want {
		values = append(values, core.Rule{Name: string(rune('a' + i)), Resource: "*", Kind: core.KindHotspot, Param: "ip", Limit: 1, OnMissing: m})
	}
	data, err := json.Marshal(map[string]any{"rules": values})
	require.NoError(t, err)
	assert.Contains(t, string(data), `"onMissing":"reject"`)
	again, err := rulesfile.Parse(data)
	require.NoError(t, err)
	assert.Equal(t, rules, again)

	_, err = rulesfile.Parse([]byte(`
rules:
  - {name: a, resource: "*", kind: hotspot, param: ip, limit: 1, onMissing: drop}
  - {name: f, resource: "*", kind: flow, limit: 1, onMissing: reject}
`))
	require.Error(t, err)
	assert.Contains(t, err.Error(), `rules[0] (a)`)
	assert.Contains(t, err.Error(), `onMissing must be skip, reject or shared, got "drop"`)
	assert.Contains(t, err.Error(), `rules[1] (f)`)
	assert.Contains(t, err.Error(), `onMissing does not apply to kind flow (only to kind hotspot)`)
}

func TestStoreRulesValidation(t *testing.T) {
	_, err := rulesfile.Parse([]byte(`rules:
  - name: a
    resource: x
    kind: flow
    limit: 1
    store: redis
    algorithm: leap-array
    buckets: 5
    mode: eventually
    onFailure: maybe
    localLimit: -1
    window: 1000h
  - name: b
    resource: x
    kind: concurrency
    limit: 1
    store: redis
  - name: c
    resource: x
    kind: flow
    limit: 1
    mode: exact
  - name: d
    resource: x
    kind: hotspot
    param: ip
    limit: 1
    algorithm: concurrency
    store: "no good"
`))
	require.Error(t, err)
	for _, want := range []string{
		`rules[0] (a): line 7: algorithm must be sliding-counter, token-bucket or leaky-bucket with a store, got "leap-array"`,
		`rules[0] (a): line 8: buckets does not apply to rules with a store`,
		`rules[0] (a): line 9: mode must be exact or approximate, got "eventually"`,
		`rules[0] (a): line 10: onFailure must be local, open or closed, got "maybe"`,
		`rules[0] (a): line 11: localLimit must be >= 0, got -1`,
		`rules[0] (a): line 12: window must be <= 720h0m0s with a store, got 1000h0m0s`,
		`rules[1] (b): line 17: store does not apply to kind concurrency (only to kinds flow and hotspot)`,
		`rules[2] (c): line 22: mode only applies to rules with a store`,
		`rules[3] (d): line 29: store must be a store name`,
		`rules[3] (d): line 28: algorithm must be token-bucket or leaky-bucket with a store, got "concurrency"`,
	} {
		assert.Contains(t, err.Error(), want)
	}

}

func blockedBy(t *testing.T, err error) *core.BlockedError {
	t.Helper()
	var b *core.BlockedError
	require.ErrorAs(t, err, &b)
	require.ErrorIs(t, err, core.ErrBlocked)
	return b
}

func TestSystemRulesFile(t *testing.T) {
	rules, err := rulesfile.Load(filepath.Join("testdata", "rules-system.yaml"))
	require.NoError(t, err)
	assert.Equal(t, []core.Rule{
		{Name: "cpu", Resource: "*", Kind: core.KindSystem, Signal: core.SignalCPU, Threshold: 0.8, Strategy: core.StrategyBBR, Priority: "header:X-Priority"},
		{Name: "inflight", Resource: "GET /api/*", Kind: core.KindSystem, Signal: core.SignalInFlight, Threshold: 200},
		{Name: "system:*", Resource: "*", Kind: core.KindSystem, Signal: core.SignalRT, Threshold: 250},
	}, rules)

	for file, want := range map[string]string{
		"invalid-rules-system-cpu.yaml":    ": rules[0] (cpu): line 6: threshold must be a fraction of the CPU in (0, 1] for signal cpu, got 80",
		"invalid-rules-system-bbr.yaml":    `: rules[0] (load): line 7: strategy bbr only applies to signal cpu, got signal "load"`,
		"invalid-rules-priority-flow.yaml": `: rules[0] (api): line 6: priority does not apply to kind flow (only to kinds adaptive and system)`,
	} {
		_, err = rulesfile.Load(filepath.Join("testdata", file))
		assert.ErrorContains(t, err, want, file)
	}
}
