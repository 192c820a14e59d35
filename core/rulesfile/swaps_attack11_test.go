package rulesfile_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWatcherKeepsRulesWhenTheFileBecomesSomethingElse: an operator's
// tools (or a hostile one with write access to the directory) replace the
// rules file with what is not a file: a directory, a symlink to an endless
// device (/dev/zero, /dev/urandom), a symlink loop, a dangling symlink.
// Each Reload returns an error naming the path, within a second, and the
// rules in force stay; a good file after them applies.
func TestWatcherKeepsRulesWhenTheFileBecomesSomethingElse(t *testing.T) {
	x := newWatched(t, "rules.yaml", rulesYAML("a", 1))
	swaps := map[string]func(path string) error{
		"a directory": func(path string) error { return os.Mkdir(path, 0o700) },
		"/dev/zero":   func(path string) error { return os.Symlink("/dev/zero", path) },
		"/dev/urandom": func(path string) error {
			return os.Symlink("/dev/urandom", path)
		},
		"a symlink loop": func(path string) error { return os.Symlink(filepath.Base(path), path) },
		"a dangling link": func(path string) error {
			return os.Symlink(filepath.Join(filepath.Dir(path), "gone"), path)
		},
	}
	for name, swap := range swaps {
		require.NoError(t, os.RemoveAll(x.path))
		require.NoError(t, swap(x.path), name)
		done := make(chan error, 1)
		go func() { done <- x.w.Reload() }()
		select {
		case err := <-done:
			if assert.Error(t, err, name) {
				assert.Contains(t, err.Error(), x.path, name)
				t.Logf("%s: %v", name, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: Reload hangs", name)
		}
		assert.Equal(t, []string{"a=1"}, x.ruleNames(), name)
	}
	require.NoError(t, os.RemoveAll(x.path))
	x.write(rulesYAML("a", 2))
	require.NoError(t, x.w.Reload())
	assert.Equal(t, []string{"a=2"}, x.ruleNames())
}
