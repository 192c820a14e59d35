package adaptertest

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/clock"
	"github.com/sluicekit/sluice/core/rulesfile"
	"github.com/sluicekit/sluice/extractors"
)

// testUnknownParam checks that a rule naming a param the adapter's
// extractor cannot supply is refused: by the adapter's construction for
// the rules in force, by SetRules and by a reload afterwards, which keep
// the rules in force.
func testUnknownParam(t *testing.T, f factory) {
	perUser := core.Rule{Name: "per-user", Resource: "GET /items/{id}", Kind: core.KindHotspot, Param: "user", Limit: 2, Window: time.Second}
	fromHeader := func(r *http.Request) []string { return r.Header.Values("X-User") }

	// Without WithHTTPParam, and with the param registered for gRPC only:
	// the adapter refuses to start, naming the rule and the param.
	grpcOnly, err := extractors.New(extractors.WithGRPCParam("user", func(context.Context, string) []string { return []string{"x"} }))
	require.NoError(t, err)
	for _, x := range []*extractors.Extractor{nil, grpcOnly} {
		g, err := core.New(core.WithClock(clock.NewFake(0)), core.WithRules(perUser))
		require.NoError(t, err, "a Guard without param sources accepts any well-formed param")
		msg := fmt.Sprint(recoverPanic(func() {
			f(t, g, Options{Extractor: x}, []Route{{"GET", "/items/{id}", func(http.ResponseWriter, *http.Request) {}}})
		}))
		assert.Contains(t, msg, `rules[0] (per-user): param "user" is not a custom param of the HTTP extractor`)
		assert.Contains(t, msg, "WithHTTPParam")
	}

	// With it, the rule limits over HTTP, and the extractor is the
	// Guard's source from then on.
	x, err := extractors.New(extractors.WithHTTPParam("user", fromHeader))
	require.NoError(t, err)
	s := start(t, f, Options{Extractor: x}, perUser)
	for range 2 {
		require.Equal(t, http.StatusOK, s.get("/items/1", "X-User: alice").status)
	}
	checkBlocked(t, s.get("/items/1", "X-User: alice"), http.StatusTooManyRequests, "per-user", 2, time.Second)

	typo := perUser
	typo.Name, typo.Param = "per-tenant", "tenant"
	err = s.guard.SetRules([]core.Rule{perUser, typo})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `rules[1] (per-tenant): param "tenant" is not a custom param of the HTTP extractor (registered: user)`)
	require.Len(t, s.guard.Rules(), 1, "the rules in force stay")
	checkBlocked(t, s.get("/items/1", "X-User: alice"), http.StatusTooManyRequests, "per-user", 2, time.Second)

	// A reload from a file is refused the same way.
	path := filepath.Join(t.TempDir(), "rules.yaml")
	rule := func(name, param string) string {
		return fmt.Sprintf("rules:\n  - {name: %s, resource: \"GET /items/{id}\", kind: hotspot, param: %s, limit: 2, window: 1s}\n", name, param)
	}
	require.NoError(t, os.WriteFile(path, []byte(rule("per-user", "user")), 0o600))
	w, err := rulesfile.NewWatcher(s.guard, path)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, []byte(rule("per-tenant", "tenant")), 0o600))
	err = w.Reload()
	require.Error(t, err)
	assert.Contains(t, err.Error(), `param "tenant" is not a custom param of the HTTP extractor`)
	require.Len(t, s.guard.Rules(), 1)
	assert.Equal(t, "per-user", s.guard.Rules()[0].Name, "the rules in force stay")
	checkBlocked(t, s.get("/items/1", "X-User: alice"), http.StatusTooManyRequests, "per-user", 2, time.Second)

	// A program that passes a param to Enter itself declares it.
	require.NoError(t, s.guard.AddParamSource(core.CustomParams("tenant")))
	require.NoError(t, s.guard.SetRules([]core.Rule{perUser, typo}))
}

// recoverPanic returns what fn panicked with, nil when it returned.
func recoverPanic(fn func()) (v any) {
	defer func() { v = recover() }()
	fn()
	return nil
}
