package rulesfile_test

import (
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/clock"
	"github.com/sluicekit/sluice/core/internal/logtest"
	"github.com/sluicekit/sluice/core/rulesfile"
)

// TestWatcherFollowsConfigMapSwaps: the rules file is mounted as
// Kubernetes mounts a ConfigMap, rules.yaml -> ..data/rules.yaml, ..data
// a symlink to a timestamped directory that each update replaces by
// renaming a new symlink over it. Every version, however alike in size
// and time to the one before, is applied; a swap to a directory without
// the file (a key removed from the ConfigMap) or with a broken one keeps
// the rules in force and is reported; the next good version applies.
func TestWatcherFollowsConfigMapSwaps(t *testing.T) {
	dir := t.TempDir()
	old := time.Now().Add(-time.Hour)
	version := 0
	swap := func(content string) {
		t.Helper()
		version++
		ts := filepath.Join(dir, "..v"+string(rune('0'+version)))
		require.NoError(t, os.Mkdir(ts, 0o700))
		if content != "" {
			f := filepath.Join(ts, "rules.yaml")
			require.NoError(t, os.WriteFile(f, []byte(content), 0o600))
			require.NoError(t, os.Chtimes(f, time.Time{}, old)) // same size, same time
		}
		tmp := filepath.Join(dir, "..data_tmp")
		require.NoError(t, os.Symlink(filepath.Base(ts), tmp))
		prev, _ := os.Readlink(filepath.Join(dir, "..data"))
		require.NoError(t, os.Rename(tmp, filepath.Join(dir, "..data")))
		if prev != "" {
			require.NoError(t, os.RemoveAll(filepath.Join(dir, prev)))
		}
	}
	swap(rulesYAML("a", 1))
	path := filepath.Join(dir, "rules.yaml")
	require.NoError(t, os.Symlink(filepath.Join("..data", "rules.yaml"), path))

	x := &watched{t: t, clk: clock.NewFake(time.Hour), path: path, log: &logtest.Recorder{}}
	g, err := core.New(core.WithClock(x.clk), core.WithLogger(slog.New(slog.DiscardHandler)))
	require.NoError(t, err)
	t.Cleanup(func() { _ = g.Close() })
	x.g = g
	x.w, err = rulesfile.NewWatcher(g, path, rulesfile.WithPollInterval(watchPoll),
		rulesfile.WithLogger(slog.New(x.log)), rulesfile.OnReload(x.onReload))
	require.NoError(t, err)
	x.run()

	for i, step := range []struct {
		content string // "" for a directory without the file
		want    string
		failed  int
	}{
		{rulesYAML("a", 2), "a=2", 0},
		{rulesYAML("a", 3), "a=3", 0},
		{"", "a=3", 1},
		{rulesYAML("a", 4), "a=4", 1},
		{rulesYAML("a", 5)[:40], "a=4", 2},
		{rulesYAML("a", 6), "a=6", 2},
	} {
		swap(step.content)
		x.poll(3)
		assert.Equal(t, []string{step.want}, x.ruleNames(), "step %d", i)
		_, errs := x.reported()
		assert.Len(t, errs, step.failed, "step %d: %v", i, errs)
	}
}
