package sluiceprom_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/clock"
	sluiceprom "github.com/sluicekit/sluice/core/prometheus"
	"github.com/sluicekit/sluice/core/rulesfile"
)

// Each rule's limit and use are gauges with the same labels: usage vs
// limit is one query.
func TestRuleLimitAndUse(t *testing.T) {
	g, err := core.New(core.WithClock(clock.NewFake(time.Hour)), quiet, core.WithRules(
		core.Rule{Name: "rate", Resource: "GET /r", Kind: core.KindFlow, Limit: 10},
		core.Rule{Name: "inflight", Resource: "GET /r", Kind: core.KindConcurrency, Limit: 4},
		core.Rule{Name: "per-user", Resource: "GET /r", Kind: core.KindHotspot, Limit: 1, Param: "u"}))
	require.NoError(t, err)
	defer g.Close()
	for range 3 {
		e, err := g.Enter(context.Background(), "GET /r")
		require.NoError(t, err)
		e.Exit(nil)
	}
	e, err := g.Enter(context.Background(), "GET /r")
	require.NoError(t, err)
	defer e.Exit(nil)
	fams := gather(t, g)
	must(t, fams, 10, "sluice_rule_limit", "sluice_rule_name", "rate", "sluice_rule_kind", "flow", "sluice_rule_resource", "GET /r")
	must(t, fams, 4, "sluice_rule_usage", "sluice_rule_name", "rate", "sluice_rule_kind", "flow", "sluice_rule_resource", "GET /r")
	must(t, fams, 4, "sluice_rule_limit", "sluice_rule_name", "inflight", "sluice_rule_kind", "concurrency")
	must(t, fams, 1, "sluice_rule_usage", "sluice_rule_name", "inflight", "sluice_rule_kind", "concurrency")
	_, ok := value(fams, "sluice_rule_limit", "sluice_rule_name", "per-user")
	assert.False(t, ok, "a hotspot rule limits each value apart: no one use")
}

// WithWatcher adds the reloads of the rules file.
func TestReloadMetrics(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rules.yaml")
	write := func(s string) { require.NoError(t, os.WriteFile(path, []byte(s), 0o600)) }
	write("rules:\n  - {resource: a, kind: flow, limit: 1}\n")
	g, err := core.New(core.WithClock(clock.NewFake(time.Hour)), quiet)
	require.NoError(t, err)
	defer g.Close()
	before := time.Now()
	w, err := rulesfile.NewWatcher(g, path, rulesfile.WithLogger(slog.New(slog.DiscardHandler)))
	require.NoError(t, err)
	c, err := sluiceprom.NewCollector(g, sluiceprom.WithWatcher(w))
	require.NoError(t, err)
	reg := prometheus.NewPedanticRegistry()
	require.NoError(t, reg.Register(c))
	fams := func() map[string]float64 {
		got, err := reg.Gather()
		require.NoError(t, err)
		out := map[string]float64{}
		for _, f := range got {
			for _, m := range f.GetMetric() {
				name := f.GetName()
				for _, l := range m.GetLabel() {
					name += "," + l.GetName() + "=" + l.GetValue()
				}
				out[name] = m.GetCounter().GetValue() + m.GetGauge().GetValue()
			}
		}
		return out
	}
	m := fams()
	assert.Equal(t, 1.0, m["sluice_rules_reloads_total,sluice_result=success"])
	assert.Equal(t, 0.0, m["sluice_rules_reloads_total,sluice_result=failure"])
	assert.Equal(t, 1.0, m["sluice_rules_last_reload_successful"])
	assert.GreaterOrEqual(t, m["sluice_rules_last_reload_success_timestamp_seconds"], float64(before.UnixNano())/1e9-1e-6)
	assert.LessOrEqual(t, m["sluice_rules_last_reload_success_timestamp_seconds"], float64(time.Now().UnixNano())/1e9)
	assert.Contains(t, m, "sluice_rules_last_reload_duration_seconds")

	write("rules:\n  - {resource: a, kind: flow, limit: -1}\n")
	require.Error(t, w.Reload())
	m = fams()
	assert.Equal(t, 1.0, m["sluice_rules_reloads_total,sluice_result=failure"])
	assert.Equal(t, 0.0, m["sluice_rules_last_reload_successful"])

	_, err = sluiceprom.NewCollector(g, sluiceprom.WithWatcher(nil))
	assert.ErrorContains(t, err, "watcher is nil")
	// Without WithWatcher there is no reload series.
	assert.Nil(t, gather(t, g)["sluice_rules_reloads_total"])
}
