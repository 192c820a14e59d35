package rulesfile_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core/rulesfile"
)

// TestFilesSavedWithAByteOrderMark: Windows editors and PowerShell save
// UTF-8 with a byte order mark. A YAML rules file with one loads; a JSON
// one was refused with "invalid character 'ï' looking for beginning of
// value". Both load, with their problems on the right lines.
func TestFilesSavedWithAByteOrderMark(t *testing.T) {
	const bom = "\xef\xbb\xbf"
	dir := t.TempDir()
	for name, content := range map[string]string{
		"rules.yaml": bom + "rules:\n  - name: a\n    resource: x\n    kind: flow\n    limit: 5\n",
		"rules.json": bom + "{\"rules\": [\n  {\"name\": \"a\", \"resource\": \"x\", \"kind\": \"flow\", \"limit\": 5}\n]}\n",
	} {
		path := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
		rules, err := rulesfile.Load(path)
		require.NoError(t, err, name)
		assert.Len(t, rules, 1, name)
	}
	path := filepath.Join(dir, "bad.json")
	require.NoError(t, os.WriteFile(path, []byte(bom+"{\"rules\": [\n  {\"name\": \"a\", \"resource\": \"x\", \"kind\": \"flow\", \"limit\": -5}\n]}\n"), 0o600))
	_, err := rulesfile.Load(path)
	assert.ErrorContains(t, err, "line 2: limit must be >= 0, got -5")
}
