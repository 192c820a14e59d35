package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestOverrideKeysNoRequestCarriesAreRefused: an operator checks a rules
// file with sluicecheck before a reload; the service's adapters refuse a
// hotspot override whose key no request can carry (" vip" on a header,
// an IPv4-mapped address on ip), so sluicecheck must refuse it too, naming
// rule, field and key, and not the keys requests do carry.
func TestOverrideKeysNoRequestCarriesAreRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rules.yaml")
	require.NoError(t, os.WriteFile(path, []byte(`rules:
  - {name: fine, resource: "*", kind: flow, limit: 10}
  - {name: per-user, resource: "*", kind: hotspot, param: "header:X-User", limit: 1, overrides: {" vip": 100, "gold": 10}}
  - {name: per-ip, resource: "*", kind: hotspot, param: ip, limit: 1, overrides: {"::ffff:192.0.2.1": 100, "192.0.2.2": 10}}
  - {name: custom, resource: "*", kind: hotspot, param: tenant, limit: 1, overrides: {" any": 100}}
`), 0o600))
	var stdout, stderr bytes.Buffer
	code := run([]string{path}, &stdout, &stderr)
	assert.Equal(t, 1, code, "stdout: %s", stdout.String())
	assert.Equal(t, path+`:3: rules[1] (per-user): overrides key " vip" can never apply: header:X-User values are split at commas, with the spaces and tabs around each removed
`+path+`:4: rules[2] (per-ip): overrides key "::ffff:192.0.2.1" can never apply: ip yields it as "192.0.2.1"
`+path+`: invalid: 2 problems
`, stderr.String())
}
