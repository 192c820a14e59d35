package rulesfile_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/rulesfile"
)

// TestNewGuard starts a Guard with the rules of a file, after the rules of
// core.WithRules, and refuses a file whose rules the Guard refuses: each
// problem core.New finds (a store the Guard lacks, a name used by a rule of
// WithRules, a bad limit) names the rule by its place in the file and
// gives its line.
func TestNewGuard(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
		return path
	}
	good := write("good.yaml", "rules:\n  - name: b\n    resource: GET /b\n    kind: flow\n    limit: 2\n")
	goRule := core.WithRules(core.Rule{Name: "a", Resource: "GET /a", Kind: core.KindConcurrency, Limit: 1})

	g, err := rulesfile.NewGuard(good, goRule)
	require.NoError(t, err)
	defer g.Close()
	var names []string
	for _, r := range g.Rules() {
		names = append(names, r.Name)
	}
	assert.Equal(t, []string{"a", "b"}, names, "the rules of WithRules, then the file's")

	bad := write("bad.yaml", `rules:
  - name: shared
    resource: GET /s
    kind: flow
    limit: 5
    store: redis
  - name: a
    resource: GET /c
    kind: concurrency
    limit: 1
  - name: neg
    resource: GET /n
    kind: flow
    limit: -1
`)
	_, err = rulesfile.NewGuard(bad, goRule)
	require.Error(t, err)
	assert.Equal(t, "rules file "+bad+": "+
		"rules[1] (a): line 7: name \"a\" is already used by rules[0]\n"+
		"rules[2] (neg): line 14: limit must be >= 0, got -1", err.Error())
	var rerr *core.RulesError
	require.ErrorAs(t, err, &rerr)

	// The store is missing: a problem found compiling the rules, given
	// the rule's line.
	_, err = rulesfile.NewGuard(write("store.yaml", "rules:\n  - name: x\n    resource: GET /x\n    kind: concurrency\n    limit: 1\n  - name: shared\n    resource: GET /s\n    kind: flow\n    limit: 5\n    store: redis\n"))
	assert.ErrorContains(t, err, `rules[1] (shared): line 6: store "redis" is not given to the Guard`)

	_, err = rulesfile.NewGuard(filepath.Join(dir, "missing.yaml"))
	assert.ErrorContains(t, err, "rules file "+filepath.Join(dir, "missing.yaml")+": open ")
	_, err = rulesfile.NewGuard(good, core.WithMaxResources(0))
	assert.ErrorContains(t, err, "WithMaxResources: must be >= 1, got 0")
	_, err = rulesfile.NewGuard(write("syntax.yaml", "rules:\n  - name: x\n    resource: GET /x\n    kind: flow\n    limt: 1\n"))
	assert.ErrorContains(t, err, `rules[0] (x): line 5: unknown field "limt" (did you mean "limit"?)`)
}
