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
// can never apply. On a748097 each is accepted and silently ignored (the
// 300-byte key gets the default limit: 200, 429, 429 where its override
// allows 100). A rule either applies or is refused loudly: New (or
// Middleware, which adds its Extractor to the Guard's param sources)
// must refuse it, naming the key, or the override must apply.
func TestOverrideKeysTheExtractorNeverYieldsAreRefused(t *testing.T) {
	t.Skip("bug: hotspot override keys an Extractor never yields (longer than WithMaxValueLen, default 256; with surrounding spaces or commas for header params) are accepted and never apply; the check belongs with core.ParamSource and extractors.Extractor.CheckParam")
	long := "key-" + strings.Repeat("x", 296)
	for _, key := range []string{long, " vip", "a,b"} {
		g, err := core.New(core.WithRules(core.Rule{Name: "r", Resource: "GET /a", Kind: core.KindHotspot, Param: "header:X-Key", Limit: 1,
			Overrides: map[string]int64{key: 100}}))
		require.NoError(t, err)
		mux := http.NewServeMux()
		mux.HandleFunc("GET /a", func(w http.ResponseWriter, r *http.Request) {})
		mw, err := sluicehttp.New(g)
		if err != nil {
			assert.Contains(t, err.Error(), "r", "the refusal names the rule")
			continue
		}
		h := mw(mux)
		for i := range 3 {
			w := httptest.NewRecorder()
			r := httptest.NewRequest("GET", "/a", nil)
			r.Header.Set("X-Key", key)
			h.ServeHTTP(w, r)
			assert.Equal(t, http.StatusOK, w.Code, "%.12q: request %d within its override of 100", key, i)
		}
	}
}
