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
	assert.Equal(t, path+`: rules[0] (shared): overrides key " vip" can never apply: header:X-User values are split at commas, with the spaces and tabs around each removed
`+path+`: rules[1] (local): overrides key "a,b" can never apply: header:X-User values are split at commas, with the spaces and tabs around each removed
`+path+`: invalid: 2 problems
`, stderr.String())
}
