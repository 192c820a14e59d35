package adaptertest

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/extractors"
)

// testDeclaredOnce checks that an Extractor given to the Guard alone
// (core.WithParamSource) is the one an adapter given none reads params
// with: its custom params and its trusted proxies apply, a spoofed
// X-Forwarded-For from a peer it does not trust is still ignored, and an
// adapter given another Extractor, or none when the Guard has two, is
// refused at construction.
func testDeclaredOnce(t *testing.T, f factory) {
	perUser := core.Rule{Name: "per-user", Resource: "GET /items/{id}", Kind: core.KindHotspot, Param: "user", Limit: 2, Window: time.Second}
	perIP := core.Rule{Name: "per-ip", Resource: "GET /hello", Kind: core.KindHotspot, Param: "ip", Limit: 2, Window: time.Second}
	newExtractor := func(opts ...extractors.Option) *extractors.Extractor {
		x, err := extractors.New(opts...)
		require.NoError(t, err)
		return x
	}
	users := newExtractor(extractors.WithHTTPParam("user", func(r *http.Request) []string { return r.Header.Values("X-User") }))

	t.Run("custom param", func(t *testing.T) {
		s := start(t, f, Options{Guard: []core.Option{core.WithParamSource(users)}}, perUser)
		for range 2 {
			require.Equal(t, http.StatusOK, s.get("/items/1", "X-User: alice").status)
		}
		checkBlocked(t, s.get("/items/1", "X-User: alice"), http.StatusTooManyRequests, "per-user", 2, time.Second)
		require.Equal(t, http.StatusOK, s.get("/items/1", "X-User: bob").status, "bob has a limit of his own")
	})

	t.Run("trusted proxy", func(t *testing.T) {
		// The loopback client is the trusted proxy: the forwarded
		// addresses are the clients, each with a limit of its own.
		proxy := newExtractor(extractors.WithTrustedProxies("127.0.0.0/8"))
		s := start(t, f, Options{Guard: []core.Option{core.WithParamSource(proxy)}}, perIP)
		for range 2 {
			require.Equal(t, http.StatusOK, s.get("/hello", "X-Forwarded-For: 203.0.113.1").status)
		}
		checkBlocked(t, s.get("/hello", "X-Forwarded-For: 203.0.113.1"), http.StatusTooManyRequests, "per-ip", 2, time.Second)
		require.Equal(t, http.StatusOK, s.get("/hello", "X-Forwarded-For: 203.0.113.2").status, "another forwarded client")
	})

	t.Run("untrusted peer", func(t *testing.T) {
		// The Extractor trusts only 10.0.0.0/8: the loopback client's
		// forwarding headers are spoofs, and it is one client whatever
		// it claims.
		proxy := newExtractor(extractors.WithTrustedProxies("10.0.0.0/8"))
		s := start(t, f, Options{Guard: []core.Option{core.WithParamSource(proxy)}}, perIP)
		require.Equal(t, http.StatusOK, s.get("/hello", "X-Forwarded-For: 203.0.113.1").status)
		require.Equal(t, http.StatusOK, s.get("/hello", "X-Forwarded-For: 203.0.113.2").status)
		checkBlocked(t, s.get("/hello", "X-Forwarded-For: 203.0.113.3"), http.StatusTooManyRequests, "per-ip", 2, time.Second)
	})

	t.Run("the same Extractor twice", func(t *testing.T) {
		// The adapter's WithExtractor, given the Guard's Extractor, is
		// redundant and accepted.
		s := start(t, f, Options{Extractor: users, Guard: []core.Option{core.WithParamSource(users)}}, perUser)
		for range 2 {
			require.Equal(t, http.StatusOK, s.get("/items/1", "X-User: alice").status)
		}
		checkBlocked(t, s.get("/items/1", "X-User: alice"), http.StatusTooManyRequests, "per-user", 2, time.Second)
	})

	routes := []Route{{"GET", "/items/{id}", func(http.ResponseWriter, *http.Request) {}}}
	t.Run("another Extractor", func(t *testing.T) {
		// An adapter reading params with an Extractor the Guard was not
		// given would not see the user: it is refused.
		g, err := core.New(core.WithParamSource(users), core.WithRules(perUser))
		require.NoError(t, err)
		msg := fmt.Sprint(recoverPanic(func() { f(t, g, Options{Extractor: newExtractor()}, routes) }))
		assert.Contains(t, msg, "WithExtractor: the Guard was given another Extractor (core.WithParamSource)")
	})

	t.Run("two Extractors", func(t *testing.T) {
		g, err := core.New(core.WithParamSource(users), core.WithParamSource(newExtractor()), core.WithRules(perUser))
		require.NoError(t, err)
		msg := fmt.Sprint(recoverPanic(func() { f(t, g, Options{}, routes) }))
		assert.Contains(t, msg, "the Guard was given 2 Extractors (core.WithParamSource): give the adapter the one it reads params with (WithExtractor)")
		// Told which, the adapter starts.
		assert.Nil(t, recoverPanic(func() { f(t, g, Options{Extractor: users}, routes) }))
	})
}
