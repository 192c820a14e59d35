package sluicehttp_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	sluicehttp "github.com/sluicekit/sluice/adapters/nethttp"
	"github.com/sluicekit/sluice/core"
)

// TestMethodOverrideKeysTheExtractorNeverYieldsAreRefused: the method
// param of an HTTP request is one of the standard methods or OTHER (so
// clients cannot mint values): an override for "PROPFIND" or "get" can
// never apply, and is refused, saying what the param yields; one for
// "OTHER" applies to every other method.
func TestMethodOverrideKeysTheExtractorNeverYieldsAreRefused(t *testing.T) {
	for key, says := range map[string]string{"PROPFIND": `yields it as "OTHER"`, "get": `yields it as "OTHER"`} {
		g, err := core.New(core.WithRules(core.Rule{Name: "r", Resource: "* /a", Kind: core.KindHotspot, Param: "method", Limit: 1,
			Overrides: map[string]int64{key: 100, "GET": 5}}))
		require.NoError(t, err)
		_, err = sluicehttp.New(g)
		require.Error(t, err, key)
		assert.Contains(t, err.Error(), "rules[0] (r): overrides key "+core.Quote(key)+" can never apply: method "+says)
		assert.NotContains(t, err.Error(), `"GET"`)
	}

	g, err := core.New(core.WithRules(core.Rule{Name: "r", Resource: "* /a", Kind: core.KindHotspot, Param: "method", Limit: 1,
		Overrides: map[string]int64{"OTHER": 3}}))
	require.NoError(t, err)
	mw, err := sluicehttp.New(g)
	require.NoError(t, err)
	mux := http.NewServeMux()
	mux.HandleFunc("/a", func(http.ResponseWriter, *http.Request) {})
	h := mw(mux)
	var codes []int
	for range 4 {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("PROPFIND", "/a", nil))
		codes = append(codes, w.Code)
	}
	assert.Equal(t, []int{200, 200, 200, 429}, codes, "OTHER's override of 3")
}
