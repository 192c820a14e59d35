package sluiceenvoy_test

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	sluiceenvoy "github.com/sluicekit/sluice/adapters/envoy"
	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/clock"
)

// TestWatcherReportsBadConfigAfterRevert: an operator breaks the config,
// reverts it to the config in force, then breaks it the same way again;
// the second break is reported (OnReload and the log) as the first was.
// Before, the watcher took it for the failure already reported and said
// nothing, while the file on disk was not the config in force.
func TestWatcherReportsBadConfigAfterRevert(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "edge.yaml")
	good := "domain: edge\ndescriptors:\n  - key: remote_address\n    rate_limit: {unit: minute, requests_per_unit: 3}\n"
	bad := good + "  - key: bad\n    rate_limit: {unit: fortnight}\n"
	write(t, file, good)
	cfg, err := sluiceenvoy.LoadFiles(dir)
	require.NoError(t, err)
	g, err := core.New(core.WithClock(clock.NewFake(time.Hour)), core.WithLogger(slog.New(slog.DiscardHandler)))
	require.NoError(t, err)
	t.Cleanup(func() { _ = g.Close() })
	s, err := sluiceenvoy.New(g, cfg)
	require.NoError(t, err)
	logs := make(chan string, 100)
	w := newWatch(t, s, slog.New(msgHandler(logs)), dir)

	write(t, file, bad)
	require.ErrorContains(t, w.reload(), "fortnight")
	write(t, file, good) // the config in force: nothing to apply
	w.poll()
	var said []string
	for len(logs) > 0 {
		said = append(said, <-logs)
	}
	assert.Contains(t, said, "sluiceenvoy: config files are back to the config in force")
	write(t, file, bad)
	require.ErrorContains(t, w.reload(), "fortnight")
}

// msgHandler is a slog.Handler sending each record's message to ch.
type msgHandler chan<- string

func (h msgHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h msgHandler) Handle(_ context.Context, r slog.Record) error {
	select {
	case h <- r.Message:
	default:
	}
	return nil
}
func (h msgHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h msgHandler) WithGroup(string) slog.Handler      { return h }
