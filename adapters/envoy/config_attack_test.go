//go:build unix

package sluiceenvoy_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	sluiceenvoy "github.com/sluicekit/sluice/adapters/envoy"
)

// returns runs f and reports whether it returned within a minute: a hang
// is for ever, so the bound is no measure of speed.
func returns(f func()) bool {
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
		return true
	case <-time.After(time.Minute):
		return false
	}
}

// TestConfigNotRegularFile: a config file that is a named pipe no process
// writes to (an operator's mistake: a FIFO among the config files) or a
// device (-config /dev/zero) is refused by LoadFiles, and a Watcher that
// finds one reports it, keeps the config in force and closes; reading it
// blocked for ever (the Watcher's Close too), or never ended.
func TestConfigNotRegularFile(t *testing.T) {
	dir := t.TempDir()
	s, w := watched(t, dir, "domain: edge\ndescriptors:\n  - key: remote_address\n    rate_limit: {unit: minute, requests_per_unit: 1}\n")
	t.Cleanup(func() { assert.True(t, returns(func() { _ = w.Close() }), "Close returns") })

	fifo := filepath.Join(dir, "stuck.yaml")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	t.Cleanup(func() { // unblocks a reader of the pipe, were there one
		if f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			_ = f.Close()
		}
	})
	assert.True(t, returns(func() {
		_, err := sluiceenvoy.LoadFiles(dir)
		assert.ErrorContains(t, err, "stuck.yaml: a config file must be a regular file")
	}), "LoadFiles returns")
	require.ErrorContains(t, w.reload(), "must be a regular file")
	assert.Equal(t, rlsv3.RateLimitResponse_OK, ask(t, dial(t, s), "edge", desc("remote_address", "a")).OverallCode, "the config in force serves")

	if _, err := os.Stat("/dev/zero"); err == nil {
		assert.True(t, returns(func() {
			_, err := sluiceenvoy.LoadFiles("/dev/zero")
			assert.ErrorContains(t, err, "/dev/zero: a config file must be a regular file")
		}), "LoadFiles returns")
	}
}

// TestConfigTooLarge: a config file over 16 MiB, a rules file's bound, is
// refused, as a domain file too (it was read and parsed whole, twice).
func TestConfigTooLarge(t *testing.T) {
	f := filepath.Join(t.TempDir(), "big.yaml")
	pad := make([]byte, 16<<20)
	for i := range pad {
		pad[i] = ' '
	}
	require.NoError(t, os.WriteFile(f, append([]byte("domain: d\ndescriptors: []\n#"), pad...), 0o600))
	_, err := sluiceenvoy.LoadFiles(f)
	assert.ErrorContains(t, err, "big.yaml: a config file must be at most 16777216 bytes")
}
