package sluicehttp_test

import (
	"net/http"
	"testing"

	"github.com/sluicekit/sluice/adapters/internal/adaptertest"
	sluicehttp "github.com/sluicekit/sluice/adapters/nethttp"
	"github.com/sluicekit/sluice/core"
)

// BenchmarkNetHTTPMiddleware measures Middleware around a ServeMux against
// the ServeMux alone.
func BenchmarkNetHTTPMiddleware(b *testing.B) {
	adaptertest.Bench(b, func(g *core.Guard) http.Handler {
		mux := http.NewServeMux()
		for _, rt := range adaptertest.BenchRoutes() {
			mux.HandleFunc(rt.Method+" "+rt.Path, rt.Handler)
		}
		if g == nil {
			return mux
		}
		return sluicehttp.Middleware(g)(mux)
	})
}

// BenchmarkNetHTTPWrap measures Wrap on each route of a ServeMux against
// the ServeMux alone.
func BenchmarkNetHTTPWrap(b *testing.B) {
	adaptertest.Bench(b, func(g *core.Guard) http.Handler {
		mux := http.NewServeMux()
		for _, rt := range adaptertest.BenchRoutes() {
			var h http.Handler = rt.Handler
			if g != nil {
				h = sluicehttp.Wrap(g, h)
			}
			mux.Handle(rt.Method+" "+rt.Path, h)
		}
		return mux
	})
}
