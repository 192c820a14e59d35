package sluiceenvoy_test

import (
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	sluiceenvoy "github.com/sluicekit/sluice/adapters/envoy"
	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/clock"
)

// TestWatcherAppliesChangeBeforeStart: a change made to the files after
// LoadFiles read them and before NewWatcher started applies at the
// Watcher's first polls. Before, NewWatcher took the files as they were
// then for the config in force, and the change never applied until the
// files changed again. A Server given a Config of its own is given the
// files' config the same way.
func TestWatcherAppliesChangeBeforeStart(t *testing.T) {
	v1 := "domain: edge\ndescriptors:\n  - key: remote_address\n    rate_limit: {unit: minute, requests_per_unit: 3}\n"
	v2 := v1 + "  - key: generic_key\n    value: y\n    rate_limit: {unit: minute, requests_per_unit: 0}\n"
	for _, c := range []struct {
		name string
		cfg  func(dir string) sluiceenvoy.Config
	}{
		{"LoadFiles", func(dir string) sluiceenvoy.Config {
			cfg, err := sluiceenvoy.LoadFiles(dir)
			require.NoError(t, err)
			return cfg
		}},
		{"a Config of its own", func(dir string) sluiceenvoy.Config {
			cfg, err := sluiceenvoy.LoadFiles(dir)
			require.NoError(t, err)
			return sluiceenvoy.Config{Domains: cfg.Domains}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			file := filepath.Join(dir, "edge.yaml")
			write(t, file, v1)
			cfg := c.cfg(dir)
			g, err := core.New(core.WithClock(clock.NewFake(time.Hour)), core.WithLogger(slog.New(slog.DiscardHandler)))
			require.NoError(t, err)
			t.Cleanup(func() { _ = g.Close() })
			s, err := sluiceenvoy.New(g, cfg)
			require.NoError(t, err)
			rpc := dial(t, s)
			assert.Equal(t, rlsv3.RateLimitResponse_OK, ask(t, rpc, "edge", desc("generic_key", "y")).OverallCode, "v1 has no such limit")

			write(t, file, v2) // between loading and watching
			w := newWatch(t, s, nil, dir)
			require.NoError(t, w.reload())
			assert.Equal(t, rlsv3.RateLimitResponse_OVER_LIMIT, ask(t, rpc, "edge", desc("generic_key", "y")).OverallCode, "v2 in force")
		})
	}
}

// TestWatcherPollsOnItsClock: the Watcher measures its interval on its
// clock (WatcherOptions.Clock), not the wall clock: a change applies after
// the two polls it takes, each one Interval of the fake clock, not before.
// Before, it polled on a time.Ticker, whatever clock the test ran.
func TestWatcherPollsOnItsClock(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "edge.yaml")
	v1 := "domain: edge\ndescriptors:\n  - key: remote_address\n    rate_limit: {unit: minute, requests_per_unit: 3}\n"
	s, w := watched(t, dir, v1)
	write(t, file, v1+"  - key: generic_key\n    rate_limit: {unit: minute, requests_per_unit: 0}\n")
	w.poll()
	assert.Empty(t, w.reloads, "one poll: the content must hold still for two")
	rpc := dial(t, s)
	assert.Equal(t, rlsv3.RateLimitResponse_OK, ask(t, rpc, "edge", desc("generic_key", "y")).OverallCode)
	w.poll()
	require.NoError(t, <-w.reloads)
	assert.Equal(t, rlsv3.RateLimitResponse_OVER_LIMIT, ask(t, rpc, "edge", desc("generic_key", "y")).OverallCode)
	w.poll()
	assert.Empty(t, w.reloads, "nothing new to apply")
}
