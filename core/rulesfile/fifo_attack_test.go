//go:build unix

package rulesfile_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core/rulesfile"
)

// mkfifo makes a named pipe at path that no process writes to, and
// unblocks, when the test ends, whatever is still opening it.
func mkfifo(t *testing.T, path string) {
	t.Helper()
	require.NoError(t, syscall.Mkfifo(path, 0o600))
	t.Cleanup(func() {
		if f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			_ = f.Close()
		}
	})
}

// returns runs f and reports whether it returned within a minute: a hang
// is for ever, so the bound is no measure of speed.
func returns(f func()) bool {
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
		return true
	case <-time.After(time.Minute):
		return false
	}
}

// TestRulesFileIsANamedPipe: a rules file that is a named pipe no process
// writes to (an operator's mistake, or a hostile user's, where rules files
// are written) is refused by Load and NewGuard, YAML or JSON, and a
// Watcher whose file is replaced by one reports the problem, keeps the
// rules in force, and polls on, until the file is back; so is a device
// (/dev/zero). Before, opening the pipe
// blocked for ever: Load, NewGuard and the Watcher's Run hung, and Run no
// longer returned when its context was cancelled.
func TestRulesFileIsANamedPipe(t *testing.T) {
	for _, name := range []string{"rules.yaml", "rules.json"} {
		path := filepath.Join(t.TempDir(), name)
		mkfifo(t, path)
		var err error
		require.True(t, returns(func() { _, err = rulesfile.Load(path) }), "Load of a named pipe hangs")
		assert.EqualError(t, err, "rules file "+path+": open "+path+": a rules file must be a regular file, got a named pipe")
		require.True(t, returns(func() { _, err = rulesfile.NewGuard(path) }), "NewGuard of a named pipe hangs")
		assert.Error(t, err)
	}

	_, err := rulesfile.Load("/dev/zero")
	assert.EqualError(t, err, "rules file /dev/zero: open /dev/zero: a rules file must be a regular file, got a device")

	x := newWatched(t, "rules.yaml", "rules:\n- name: five\n  resource: GET /a\n  kind: flow\n  limit: 5\n")
	x.run()
	require.NoError(t, os.Remove(x.path))
	mkfifo(t, x.path)
	require.True(t, returns(func() { x.poll(2) }), "the Watcher hangs on a named pipe")
	_, errs := x.reported()
	require.Len(t, errs, 1)
	assert.EqualError(t, errs[0], "open "+x.path+": a rules file must be a regular file, got a named pipe")
	assert.Equal(t, []string{"five=5"}, x.ruleNames(), "the rules in force are kept")
	require.NoError(t, os.Remove(x.path))
	x.write("rules:\n- name: six\n  resource: GET /a\n  kind: flow\n  limit: 6\n")
	x.poll(3)
	assert.Equal(t, []string{"six=6"}, x.ruleNames())
}
