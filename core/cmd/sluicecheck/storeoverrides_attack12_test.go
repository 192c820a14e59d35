package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestOverrideKeysOfStoreRulesAreRefused: sluicecheck refuses hotspot
// override keys no request can carry, as the service's adapters do. A
// rule kept in a store with a mode, a failure policy or a local limit
// must not hide them: before, one such rule in the file made sluicecheck
// pass every rule's bad keys (exit 0), and the service then refused the
// file at startup or reload.
func TestOverrideKeysOfStoreRulesAreRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rules.yaml")
	require.NoError(t, os.WriteFile(path, []byte(`rules:
  - {name: shared, resource: "*", kind: hotspot, param: "header:X-User", limit: 1, store: redis, mode: approximate, onFailure: local, localLimit: 5, overrides: {" vip": 100}}
  - {name: local, resource: "*", kind: hotspot, param: "header:X-User", limit: 1, overrides: {"a,b": 100, "gold": 10}}
`), 0o600))
	var stdout, stderr bytes.Buffer
	code := run([]string{"-stores", "redis", path}, &stdout, &stderr)
	assert.Equal(t, 1, code, "stdout: %s", stdout.String())
	assert.Equal(t, path+`:2: rules[0] (shared): overrides key " vip" can never apply: header:X-User values are split at commas, with the spaces and tabs around each removed
`+path+`:3: rules[1] (local): overrides key "a,b" can never apply: header:X-User values are split at commas, with the spaces and tabs around each removed
`+path+`: invalid: 2 problems
`, stderr.String())
}

// TestOverrideKeyProblemsGiveTheirLine: sluicecheck prints each problem
// "as rules.yaml:9: rules[2] (per-user): ...", the file and line (its
// doc); an override key no request can carry gets the line of the rule's
// overrides.
// Before, those problems, found on a Guard of their own, had no line, and
// a file of many rules left the operator to search for the key.
func TestOverrideKeyProblemsGiveTheirLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rules.yaml")
	require.NoError(t, os.WriteFile(path, []byte(`rules:
  - name: per-user
    resource: "GET /items/{id}"
    kind: hotspot
    param: header:X-User
    limit: 3
    overrides:
      gold: 10
      "silver ": 5
  - name: per-tenant
    resource: "*"
    kind: hotspot
    param: tenant
    limit: 3
    overrides: {" any": 1}
`), 0o600))
	var stdout, stderr bytes.Buffer
	code := run([]string{path}, &stdout, &stderr)
	assert.Equal(t, 1, code, "stdout: %s", stdout.String())
	assert.Equal(t, path+`:7: rules[0] (per-user): overrides key "silver " can never apply: header:X-User values are split at commas, with the spaces and tabs around each removed
`+path+`: invalid: 1 problem
`, stderr.String())
}
