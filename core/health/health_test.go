package health_test

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/health"
	"github.com/sluicekit/sluice/core/rulesfile"
)

const goodRules = "rules:\n  - {name: hello, resource: \"GET /hello\", kind: flow, limit: 5}\n"

func get(t *testing.T, url string) (int, health.Report, http.Header) {
	t.Helper()
	res, err := http.Get(url)
	require.NoError(t, err)
	defer res.Body.Close()
	var rep health.Report
	require.NoError(t, json.NewDecoder(res.Body).Decode(&rep))
	return res.StatusCode, rep, res.Header
}

// TestRulesFile: a refused rules file is reported, and with RequireRules
// makes the instance not ready until a good version is applied.
func TestRulesFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rules.yaml")
	require.NoError(t, os.WriteFile(path, []byte(goodRules), 0o600))
	g, err := core.New()
	require.NoError(t, err)
	defer g.Close()
	w, err := rulesfile.NewWatcher(g, path, rulesfile.WithLogger(slog.New(slog.DiscardHandler)))
	require.NoError(t, err)

	lenient, err := health.Handler(g, health.WithWatcher(w))
	require.NoError(t, err)
	strict, err := health.Handler(g, health.WithWatcher(w), health.RequireRules())
	require.NoError(t, err)
	ls, ss := httptest.NewServer(lenient), httptest.NewServer(strict)
	defer ls.Close()
	defer ss.Close()

	status, rep, h := get(t, ss.URL)
	assert.Equal(t, http.StatusOK, status)
	assert.Equal(t, "application/json", h.Get("Content-Type"))
	assert.Equal(t, health.Report{Ready: true, Stores: []health.Store{}, Rules: health.Rules{Count: 1, File: path}}, rep)

	require.NoError(t, os.WriteFile(path, []byte("rules:\n  - {name: hello, resource: \"GET /hello\", kind: flow, limit: -5}\n"), 0o600))
	require.Error(t, w.Reload())
	status, rep, _ = get(t, ss.URL)
	assert.Equal(t, http.StatusServiceUnavailable, status)
	assert.False(t, rep.Ready)
	assert.Contains(t, rep.Rules.Error, "limit must be >= 0, got -5")
	assert.Equal(t, []string{"rules file " + path + " was refused; older rules are in force"}, rep.Problems)
	assert.Equal(t, 1, rep.Rules.Count, "the rules in force stay")
	status, rep, _ = get(t, ls.URL)
	assert.Equal(t, http.StatusOK, status, "without RequireRules a refused file is only reported")
	assert.NotEmpty(t, rep.Rules.Error)

	require.NoError(t, os.WriteFile(path, []byte(goodRules), 0o600))
	require.NoError(t, w.Reload())
	status, _, _ = get(t, ss.URL)
	assert.Equal(t, http.StatusOK, status)

	res, err := http.Post(ss.URL, "text/plain", nil)
	require.NoError(t, err)
	res.Body.Close()
	assert.Equal(t, http.StatusMethodNotAllowed, res.StatusCode)
	assert.Equal(t, "GET, HEAD", res.Header.Get("Allow"))
	res, err = http.Head(ss.URL)
	require.NoError(t, err)
	res.Body.Close()
	assert.Equal(t, http.StatusOK, res.StatusCode)
}

func TestHandlerOptions(t *testing.T) {
	g, err := core.New()
	require.NoError(t, err)
	defer g.Close()
	for _, tc := range []struct {
		g    *core.Guard
		opts []health.Option
		want string
	}{
		{nil, nil, "guard is nil"},
		{g, []health.Option{nil}, "nil option"},
		{g, []health.Option{health.WithWatcher(nil)}, "WithWatcher: watcher is nil"},
		{g, []health.Option{health.RequireRules()}, "RequireRules needs WithWatcher"},
	} {
		_, err := health.Handler(tc.g, tc.opts...)
		assert.ErrorContains(t, err, tc.want)
	}
}
