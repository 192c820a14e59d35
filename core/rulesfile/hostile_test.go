package rulesfile_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/rulesfile"
)

// hostileRules are inputs that crashed, or could crash, a rules entry
// point: unbalanced brackets before, inside and after the rules list.
var hostileRules = []string{
	"]}[",
	"}",
	"]",
	`{"rules": []}]}[`,
	`{"rules": [{}]]}[{`,
	`{"rules": [}]`,
	`{"a": ]]]]{{{`,
	"rules: []]}[",
	"rules: [{]}[{",
	"rules:\n  - ]}[\n",
}

// TestHostileRulesAreRefused gives each hostile input to every rules
// entry point, as a YAML and as a JSON file and as a string: each
// returns an error and none panics.
func TestHostileRulesAreRefused(t *testing.T) {
	for _, data := range hostileRules {
		for _, name := range []string{"rules.json", "rules.yaml"} {
			path := filepath.Join(t.TempDir(), name)
			require.NoError(t, os.WriteFile(path, []byte(data), 0o600))
			_, err := rulesfile.Load(path)
			assert.Error(t, err, "Load(%s) of %q", name, data)
			g, err := rulesfile.NewGuard(path)
			assert.Error(t, err, "NewGuard(%s) of %q", name, data)
			assert.Nil(t, g)
		}
		_, err := rulesfile.Parse([]byte(data))
		assert.Error(t, err, "Parse of %q", data)
		var rs rulesfile.Rules
		_ = json.Unmarshal([]byte(data), &rs) // may be valid JSON: must not panic
		_ = yaml.Unmarshal([]byte(data), &rs)
	}
}

// TestWatcherKeepsRulesWhenTheFileIsHostile runs a Guard whose JSON rules
// file is rewritten with "]}[" (which crashed a server reloading it): the
// Watcher reports the error and the Guard keeps its rules.
func TestWatcherKeepsRulesWhenTheFileIsHostile(t *testing.T) {
	x := newWatched(t, "rules.json", `{"rules": [{"name": "five", "resource": "GET /a", "kind": "flow", "limit": 5, "window": "1m"}]}`)
	x.run()
	require.Equal(t, []string{"five=5"}, x.ruleNames())
	for i, data := range hostileRules {
		x.write(data)
		x.poll(2)
		_, errs := x.reported()
		require.Len(t, errs, i+1, "%q is refused", data)
		var re *core.RulesError
		assert.ErrorAs(t, errs[i], &re, "%q", data)
		assert.Equal(t, []string{"five=5"}, x.ruleNames(), "%q: the rules in force are kept", data)
		assert.Error(t, x.w.Stats().Err)
	}
}
