package rulesfile_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/rulesfile"
)

// TestNullLimitIsNotAGivenLimit: a flow, concurrency or hotspot rule must
// write its limit out, so that a limit left out (by a template, a file
// cut short) never blocks every request. A null limit, as a template
// renders a missing value ("limit: null", "limit: ~", JSON's null), was
// taken as written out: a limit of 0, which blocked every request of the
// route, and a running watcher applied it. It is refused with its line,
// as "limit:" with nothing after it is.
func TestNullLimitIsNotAGivenLimit(t *testing.T) {
	for _, tc := range []struct{ name, file, want string }{
		{"rules.yaml", "rules:\n  - name: items\n    resource: GET /items\n    kind: flow\n    limit: null\n",
			"rules[0] (items): line 5: limit must be a number for kind flow, got null (limit: 0, written out, blocks every request)"},
		{"rules.yaml", "rules:\n  - name: c\n    resource: \"*\"\n    kind: concurrency\n    limit: ~\n",
			"rules[0] (c): line 5: limit must be a number for kind concurrency, got null (limit: 0, written out, blocks every request)"},
		{"rules.json", `{"rules": [{"name": "per-user", "resource": "GET /items", "kind": "hotspot", "param": "ip",
  "limit": null}]}`,
			"rules[0] (per-user): line 2: limit must be a number for kind hotspot, got null (limit: 0, written out, blocks every request)"},
	} {
		_, err := rulesfile.Parse([]byte(tc.file))
		var rerr *core.RulesError
		if assert.ErrorAs(t, err, &rerr, tc.file) && assert.Len(t, rerr.Problems, 1) {
			assert.Equal(t, tc.want, rerr.Problems[0].Error())
			assert.Equal(t, "limit", rerr.Problems[0].Field)
		}

		// A running service keeps its rules.
		path := filepath.Join(t.TempDir(), tc.name)
		good := `{"rules": [{"name": "items", "resource": "GET /items", "kind": "flow", "limit": 100}]}` // JSON, YAML too
		require.NoError(t, os.WriteFile(path, []byte(good), 0o600))
		g, err := core.New()
		require.NoError(t, err)
		w, err := rulesfile.NewWatcher(g, path, rulesfile.WithLogger(slog.New(slog.DiscardHandler)))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(path, []byte(tc.file), 0o600))
		assert.Error(t, w.Reload(), tc.file)
		e, err := g.Enter(context.Background(), "GET /items")
		if assert.NoError(t, err, "the rules in force still admit: %s", tc.file) {
			e.Exit(nil)
		}
		_ = g.Close()
	}

	// Null where the field may be left out leaves it at its default.
	rules, err := rulesfile.Parse([]byte("rules:\n  - {name: w, resource: GET /x, kind: flow, limit: 5, window: null, burst: ~}\n"))
	require.NoError(t, err)
	assert.Equal(t, int64(5), rules[0].Limit)
}
