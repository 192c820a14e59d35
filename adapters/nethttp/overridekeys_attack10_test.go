package sluicehttp_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	sluicehttp "github.com/sluicekit/sluice/adapters/nethttp"
	"github.com/sluicekit/sluice/core"
)

// TestOverrideKeysTheExtractorNeverYieldsAreRefused: a hotspot override
// is a value a request's param may have. core accepts keys of up to 1024
// bytes, but the default Extractor cuts values to 256 bytes
// (extractors.WithMaxValueLen) and trims and splits header values at
// commas: an override for a 300-byte API key, for " vip" or for "a,b"
// can never apply. On a748097 each was accepted and silently ignored (the
// 300-byte key gets the default limit: 200, 429, 429 where its override
// allows 100). A rule either applies or is refused loudly: New (or
// Middleware, which adds its Extractor to the Guard's param sources)
// must refuse it, naming the key, or the override must apply.
func TestOverrideKeysTheExtractorNeverYieldsAreRefused(t *testing.T) {
	long := "key-" + strings.Repeat("x", 296)
	for _, c := range []struct{ param, key, says string }{
		{"header:X-Key", long, "keeps the first 256 bytes"},
		{"header:X-Key", " vip", "split at commas"},
		{"header:X-Key", "a,b", "split at commas"},
		{"ip", "::ffff:192.0.2.1", `yields it as "192.0.2.1"`},
		{"ip", "2001:db8::1", `yields it as "2001:db8::/64"`},
		{"host", "API.example:443", `yields it as "api.example"`},
	} {
		ok := "ok.example"
		if c.param == "ip" {
			ok = "198.51.100.1"
		}
		g, err := core.New(core.WithRules(core.Rule{Name: "r", Resource: "GET /a", Kind: core.KindHotspot, Param: c.param, Limit: 1,
			Overrides: map[string]int64{c.key: 100, ok: 5}}))
		require.NoError(t, err)
		_, err = sluicehttp.New(g)
		require.Error(t, err, "%s %.12q", c.param, c.key)
		assert.Contains(t, err.Error(), "rules[0] (r): overrides key "+core.Quote(c.key)+" can never apply", "names rule, field and key")
		assert.Contains(t, err.Error(), c.says, "says what the extractor yields")
		assert.NotContains(t, err.Error(), core.Quote(ok), "a key the extractor can yield is accepted")
	}

	// The keys an extractor does yield are accepted, and apply.
	g, err := core.New(core.WithRules(core.Rule{Name: "r", Resource: "GET /a", Kind: core.KindHotspot, Param: "header:X-Key", Limit: 1,
		Overrides: map[string]int64{long[:256]: 100, "vip": 100}}))
	require.NoError(t, err)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /a", func(w http.ResponseWriter, r *http.Request) {})
	mw, err := sluicehttp.New(g)
	require.NoError(t, err)
	h := mw(mux)
	for _, key := range []string{long, " vip , "} {
		for i := range 3 {
			w := httptest.NewRecorder()
			r := httptest.NewRequest("GET", "/a", nil)
			r.Header.Set("X-Key", key)
			h.ServeHTTP(w, r)
			assert.Equal(t, http.StatusOK, w.Code, "%.12q: request %d within its override of 100", key, i)
		}
	}
}
