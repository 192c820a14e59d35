package sluicegin_test

import (
	"net/http"
	"testing"

	"github.com/gin-gonic/gin"
	"github.com/stretchr/testify/assert"

	sluicegin "github.com/sluicekit/sluice/adapters/gin"
	sluicehttp "github.com/sluicekit/sluice/adapters/nethttp"
	"github.com/sluicekit/sluice/core"
)

// TestPathParamsAsNetHTTPWithEscapedRouting: with UseRawPath or
// UseEscapedPath, gin routes by the escaped path and decodes a parameter as
// a query ('+' a space), or not at all (UnescapePathValues false). The
// path param is the value net/http gives, over real loopback HTTP: an
// override for "a+b" (0, blocking it) applies, and "a+b/x" and "a b/x"
// are two values. Before, gin's "a b" passed the override, and the two
// values shared one limit.
func TestPathParamsAsNetHTTPWithEscapedRouting(t *testing.T) {
	rules := []core.Rule{
		{Name: "per-item", Resource: "GET /items/{id}", Kind: core.KindHotspot, Param: "path:id", Limit: 1,
			Overrides: map[string]int64{"a+b": 0, "a+b/c": 0}},
		{Name: "per-file", Resource: "GET /files/{path...}", Kind: core.KindHotspot, Param: "path:path", Limit: 1,
			Overrides: map[string]int64{"x+y/z": 0}},
	}
	type step struct {
		path string
		want int
	}
	steps := []step{
		{"/items/a+b", http.StatusForbidden},
		{"/items/a+b%2Fc", http.StatusForbidden},
		{"/items/a%2Bb", http.StatusForbidden},
		{"/items/a%20b%2Fx", http.StatusOK},
		{"/items/a+b%2Fx", http.StatusOK}, // another value than "a b/x"
		{"/items/a+b%2Fx", http.StatusTooManyRequests},
		{"/files/x+y/z%20", http.StatusOK},
		{"/files/x+y/z", http.StatusForbidden},
		{"/files/x+y%2Fz", http.StatusForbidden},
	}

	mux := http.NewServeMux()
	ok := func(w http.ResponseWriter, _ *http.Request) {}
	mux.HandleFunc("GET /items/{id}", ok)
	mux.HandleFunc("GET /files/{path...}", ok)
	srv := serve(t, sluicehttp.Middleware(newGuard(t, rules...))(mux))
	for _, s := range steps {
		assert.Equal(t, s.want, do(t, srv, "GET", s.path), "net/http %s", s.path)
	}

	for name, set := range map[string]func(*gin.Engine){
		"UseRawPath":                               func(r *gin.Engine) { r.UseRawPath = true },
		"UseEscapedPath":                           func(r *gin.Engine) { r.UseEscapedPath = true },
		"UseRawPath, UnescapePathValues false":     func(r *gin.Engine) { r.UseRawPath, r.UnescapePathValues = true, false },
		"UseEscapedPath, UnescapePathValues false": func(r *gin.Engine) { r.UseEscapedPath, r.UnescapePathValues = true, false },
	} {
		r := gin.New()
		set(r)
		r.Use(sluicegin.Middleware(newGuard(t, rules...)))
		r.GET("/items/:id", func(*gin.Context) {})
		r.GET("/files/*path", func(*gin.Context) {})
		srv := serve(t, r)
		for _, s := range steps {
			assert.Equal(t, s.want, do(t, srv, "GET", s.path), "%s: %s", name, s.path)
		}
	}
}
