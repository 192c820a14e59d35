package adaptertest

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core"
)

// logBuffer returns a logger writing text records to a buffer, safe for
// concurrent use, and a function returning what it holds.
func logBuffer() (*slog.Logger, func() string) {
	b := &lockedBuffer{}
	return slog.New(slog.NewTextHandler(b, nil)), b.String
}

type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// routeCheckRules are the rules RouteCheck gives the Guard: one per route
// of the application, and others that match none of its routes (typo,
// post), or are not HTTP routes (grpc, custom).
var routeCheckRules = []core.Rule{
	{Name: "items", Resource: "GET /items/{id}", Kind: core.KindFlow, Limit: 100},
	{Name: "files", Resource: "/files/*", Kind: core.KindFlow, Limit: 100},
	{Name: "typo", Resource: "GET /itmes/{id}", Kind: core.KindFlow, Limit: 100},
	{Name: "post", Resource: "POST /items/{id}", Kind: core.KindFlow, Limit: 100},
	{Name: "grpc", Resource: "/pkg.Service/Method", Kind: core.KindFlow, Limit: 100},
	{Name: "custom", Resource: "checkout", Kind: core.KindFlow, Limit: 100},
}

// RouteCheck checks an adapter's route check over a real server: start
// serves, on loopback, an application made with the adapter for g, with
// the routes GET /items/{id} and GET /files/{path...} in the framework's
// syntax, each answering 200, and returns its URL. At the first request,
// the Guard warns once about the rules that match no route (typo and post,
// not grpc and custom), and again at every change of its rules.
func RouteCheck(t *testing.T, start func(t *testing.T, g *core.Guard) string) {
	log, logged := logBuffer()
	g, err := core.New(core.WithLogger(log), core.WithRules(routeCheckRules...))
	require.NoError(t, err)
	t.Cleanup(func() { _ = g.Close() })
	url := start(t, g)
	warnings := func() int { return strings.Count(logged(), "level=WARN") }
	assert.Zero(t, warnings(), "warned before the first request: %s", logged())
	get := func(path string) {
		t.Helper()
		res, err := http.Get(url + path)
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		require.Equal(t, http.StatusOK, res.StatusCode, path)
	}
	get("/items/1")
	get("/files/a/b")
	out := logged()
	require.Equal(t, 1, warnings(), out)
	assert.Contains(t, out, "rules match no route")
	assert.Contains(t, out, `rules[2] (typo): \"GET /itmes/{id}\"`)
	assert.Contains(t, out, `rules[3] (post): \"POST /items/{id}\"`)
	for _, name := range []string{"(items)", "(files)", "(grpc)", "(custom)"} {
		assert.NotContains(t, out, name)
	}

	// A change of the rules is checked again: once.
	rules := append(routeCheckRules[:4:4], core.Rule{Name: "files-typo", Resource: "GET /file/*", Kind: core.KindFlow, Limit: 100})
	require.NoError(t, g.SetRules(rules))
	get("/items/1")
	require.Equal(t, 2, warnings(), logged())
	last := logged()[len(out):]
	assert.Contains(t, last, "(typo)")
	assert.Contains(t, last, "(post)")
	assert.Contains(t, last, `rules[4] (files-typo): \"GET /file/*\"`)
}
