package rulesfile_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/rulesfile"
)

// TestNewWatcherRefusesANilOption: a nil WatchOption is an error, as in
// the other constructors; before the fix NewWatcher panicked.
func TestNewWatcherRefusesANilOption(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rules.yaml")
	require.NoError(t, os.WriteFile(path, []byte("rules: []\n"), 0o600))
	g, err := core.New()
	require.NoError(t, err)
	t.Cleanup(func() { _ = g.Close() })
	_, err = rulesfile.NewWatcher(g, path, rulesfile.WithPollInterval(1), nil)
	require.EqualError(t, err, "sluice: rulesfile.NewWatcher: option 1 is nil")
}
