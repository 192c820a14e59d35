//go:build unix

package rulesfile_test

import (
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core/rulesfile"
)

// TestRulesFileSwappedForANamedPipe loads a rules file whose path is a
// symbolic link swapped, as fast as a goroutine can, between a rules file
// and a named pipe no process writes to: each Load returns (the file, or
// the pipe refused). Before the fix, the file was checked by path and then
// opened: a pipe swapped in between was opened, and the Load blocked for
// ever waiting for a writer (within a few thousand loads), as a Watcher's
// poll would, holding its lock.
func TestRulesFileSwappedForANamedPipe(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	require.NoError(t, os.WriteFile(good, []byte("rules:\n- name: five\n  resource: GET /a\n  kind: flow\n  limit: 5\n"), 0o600))
	pipe := filepath.Join(dir, "pipe")
	mkfifo(t, pipe)
	path := filepath.Join(dir, "rules.yaml")
	require.NoError(t, os.Symlink(good, path))

	var stop atomic.Bool
	var loads, refused atomic.Int64
	var wg sync.WaitGroup
	wg.Go(func() { // swaps the link, as an atomic deployment does
		tmp := filepath.Join(dir, "tmp")
		for i := 0; !stop.Load(); i++ {
			to := good
			if i%2 == 0 {
				to = pipe
			}
			_ = os.Symlink(to, tmp)
			_ = os.Rename(tmp, path)
		}
	})
	done := make(chan struct{})
	go func() { // loads, 5000 times or for a second
		defer close(done)
		for end := time.Now().Add(time.Second); loads.Load() < 5000 && time.Now().Before(end); loads.Add(1) {
			if _, err := rulesfile.Load(path); err != nil {
				refused.Add(1)
			}
		}
	}()
	hung := false
	for last, still := int64(-1), 0; ; {
		select {
		case <-done:
		case <-time.After(100 * time.Millisecond):
			if n := loads.Load(); n != last {
				last, still = n, 0
				continue
			}
			if still++; still < 100 { // 10s without a load returning: a hang is for ever
				continue
			}
			hung = true
			if f, err := os.OpenFile(pipe, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
				_ = f.Close() // unblocks the load
			}
			continue
		}
		break
	}
	stop.Store(true)
	wg.Wait()
	t.Logf("%d loads, %d refused", loads.Load(), refused.Load())
	assert.False(t, hung, "a Load blocked opening a named pipe swapped in after the check")
}
