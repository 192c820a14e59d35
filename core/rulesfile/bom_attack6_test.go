package rulesfile_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core/rulesfile"
)

// TestJSONWithByteOrderMark: editors and Windows PowerShell save UTF-8
// with a byte order mark (U+FEFF) in front, which JSON parsers may ignore
// (RFC 8259) and YAML's does. A JSON rules file so saved was refused,
// "invalid character 'ï' looking for beginning of value", where the
// same file as YAML loaded; now it loads as JSON, its errors on the lines
// they were.
func TestJSONWithByteOrderMark(t *testing.T) {
	const bom = "\xef\xbb\xbf"
	body := `{"rules": [
  {"name": "a", "resource": "GET /x", "kind": "flow", "limit": 5}
]}
`
	dir := t.TempDir()
	plain, marked := filepath.Join(dir, "plain.json"), filepath.Join(dir, "marked.json")
	require.NoError(t, os.WriteFile(plain, []byte(body), 0o600))
	require.NoError(t, os.WriteFile(marked, []byte(bom+body), 0o600))
	want, err := rulesfile.Load(plain)
	require.NoError(t, err)
	got, err := rulesfile.Load(marked)
	require.NoError(t, err)
	assert.Equal(t, want, got)
	got, err = rulesfile.Parse([]byte(bom + body))
	require.NoError(t, err)
	assert.Equal(t, want, got)
	got, err = rulesfile.Parse([]byte(bom + "rules:\n  - name: a\n    resource: GET /x\n    kind: flow\n    limit: 5\n"))
	require.NoError(t, err)
	assert.Equal(t, want, got, "YAML too")

	_, err = rulesfile.Parse([]byte(bom + "{\"rules\": [\n  {\"name\": \"a\", \"resource\": \"GET /x\", \"kind\": \"flow\", \"limit\": -1}\n]}\n"))
	assert.EqualError(t, err, "rules[0] (a): line 2: limit must be >= 0, got -1")
}
