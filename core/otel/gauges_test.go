package sluiceotel_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/clock"
	sluiceotel "github.com/sluicekit/sluice/core/otel"
	"github.com/sluicekit/sluice/core/rulesfile"
)

// Each rule's limit and usage are gauges with the same attributes.
func TestRuleLimitAndUsage(t *testing.T) {
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
	ms := collect(t, reader(t, g))
	for _, tc := range []struct {
		rule         string
		limit, usage float64
	}{{"rate", 10, 4}, {"inflight", 4, 1}} {
		v, ok := value(ms, "sluice.rule.limit", "sluice.rule.name", tc.rule, "sluice.rule.resource", "GET /r")
		assert.True(t, ok, tc.rule)
		assert.Equal(t, tc.limit, v, tc.rule)
		v, ok = value(ms, "sluice.rule.usage", "sluice.rule.name", tc.rule)
		assert.True(t, ok, tc.rule)
		assert.Equal(t, tc.usage, v, tc.rule)
	}
	_, ok := value(ms, "sluice.rule.limit", "sluice.rule.name", "per-user")
	assert.False(t, ok, "a hotspot rule limits each value apart: no one usage")
}

// WithWatcher adds the reloads of the rules file.
func TestReloadInstruments(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rules.yaml")
	write := func(s string) { require.NoError(t, os.WriteFile(path, []byte(s), 0o600)) }
	write("rules:\n  - {resource: a, kind: flow, limit: 1}\n")
	g, err := core.New(core.WithClock(clock.NewFake(time.Hour)), quiet)
	require.NoError(t, err)
	defer g.Close()
	before := time.Now()
	w, err := rulesfile.NewWatcher(g, path, rulesfile.WithLogger(slog.New(slog.DiscardHandler)))
	require.NoError(t, err)
	r := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(r))
	defer mp.Shutdown(context.Background())
	_, err = sluiceotel.Register(g, sluiceotel.WithMeterProvider(mp), sluiceotel.WithWatcher(w))
	require.NoError(t, err)

	ms := collect(t, r)
	v, _ := value(ms, "sluice.rules.reloads", "sluice.result", "success")
	assert.Equal(t, 1.0, v)
	v, ok := value(ms, "sluice.rules.reloads", "sluice.result", "failure")
	assert.True(t, ok)
	assert.Equal(t, 0.0, v)
	v, _ = value(ms, "sluice.rules.last_reload.successful")
	assert.Equal(t, 1.0, v)
	v, _ = value(ms, "sluice.rules.last_reload.success_timestamp")
	assert.GreaterOrEqual(t, v, float64(before.UnixNano())/1e9-1e-6)
	assert.Equal(t, "s", ms["sluice.rules.last_reload.duration"].Unit)

	write("rules:\n  - {resource: a, kind: flow, limit: -1}\n")
	require.Error(t, w.Reload())
	ms = collect(t, r)
	v, _ = value(ms, "sluice.rules.reloads", "sluice.result", "failure")
	assert.Equal(t, 1.0, v)
	v, _ = value(ms, "sluice.rules.last_reload.successful")
	assert.Equal(t, 0.0, v)

	_, err = sluiceotel.Register(g, sluiceotel.WithWatcher(nil))
	assert.ErrorContains(t, err, "watcher is nil")
}
