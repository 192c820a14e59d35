package main

import (
	"bytes"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/rulesfile"
	"github.com/sluicekit/sluice/extractors"
)

// TestParamsChecksPriorityParams: a system or adaptive rule's priority
// param is a param as a hotspot rule's is. A service whose extractor
// supplies only "user" refuses a rule shedding by the custom param "tier",
// so sluicecheck -params user must refuse it too; it passed it.
func TestParamsChecksPriorityParams(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rules.yaml")
	require.NoError(t, os.WriteFile(path, []byte(`rules:
  - {name: shed, resource: "*", kind: system, signal: inflight, threshold: 100, priority: tier}
  - {name: fine, resource: "*", kind: adaptive, priority: user}
`), 0o600))

	// The service: an extractor with the custom param "user" alone.
	ex, err := extractors.New(extractors.WithHTTPParam("user", func(*http.Request) []string { return nil }))
	require.NoError(t, err)
	_, err = rulesfile.NewGuard(path, core.WithParamSource(ex))
	require.Error(t, err, "the service refuses the rule")
	assert.Contains(t, err.Error(), `rules[0] (shed): line 2: priority "tier"`)

	var stdout, stderr bytes.Buffer
	code := run([]string{"-params", "user", path}, &stdout, &stderr)
	assert.Equal(t, 1, code, "stdout: %s", stdout.String())
	assert.Equal(t, path+`: rules[0] (shed): priority "tier" is not among the custom params given with -params (user)
`+path+`: invalid: 1 problem
`, stderr.String())
}
