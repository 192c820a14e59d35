package rulesfile

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/clock"
	"github.com/sluicekit/sluice/core/internal/doctext"
)

// TestDocumentedDefaults checks the default of WithPollInterval that the
// package documentation and the option's doc comment state: a Watcher
// built without it polls at the constant, and every text states it. The
// defaults of the rules' fields, which the package documentation also
// states, are checked with core.Rule's (core's TestDocumentedDefaults).
func TestDocumentedDefaults(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rules.yaml")
	require.NoError(t, os.WriteFile(path, []byte("rules: []\n"), 0o600))
	g, err := core.New(core.WithClock(clock.NewFake(0)))
	require.NoError(t, err)
	defer func() { require.NoError(t, g.Close()) }()
	w, err := NewWatcher(g, path)
	require.NoError(t, err)
	require.Equal(t, defaultPollInterval, w.interval, "the code's default")
	doctext.Check(t,
		doctext.Phrase{Path: "doc.go", Pattern: `The Watcher polls \(every (\w+) by default, WithPollInterval\)`, Want: doctext.Every(defaultPollInterval)},
		doctext.Phrase{Path: "watcher.go", Pattern: `looks at the file \(default (\S+)\)`, Want: doctext.Duration(defaultPollInterval)},
	)
}
