package sluicehttp_test

import (
	"net/http"
	"testing"

	"github.com/sluicekit/sluice/adapters/internal/adaptertest"
	sluicehttp "github.com/sluicekit/sluice/adapters/nethttp"
	"github.com/sluicekit/sluice/core"
)

// options translates the suite's options into the adapter's.
func options(o adaptertest.Options) []sluicehttp.Option {
	var opts []sluicehttp.Option
	if o.Extractor != nil {
		opts = append(opts, sluicehttp.WithExtractor(o.Extractor))
	}
	if o.SkipPath != "" {
		opts = append(opts, sluicehttp.WithSkipper(func(r *http.Request) bool { return r.URL.Path == o.SkipPath }))
	}
	if o.Classifier != nil {
		opts = append(opts, sluicehttp.WithErrorClassifier(o.Classifier))
	}
	if o.RateLimitFields {
		opts = append(opts, sluicehttp.WithRateLimitFields())
	}
	if o.BlockStatus != 0 {
		opts = append(opts, sluicehttp.WithBlockHandler(func(w http.ResponseWriter, r *http.Request, b *core.BlockedError) {
			w.Header().Set("X-Blocked-By", b.Rule)
			w.WriteHeader(o.BlockStatus)
		}))
	}
	return opts
}

// recoverer answers 500 to a request whose handler panicked, as a
// recovery middleware of the application would.
func recoverer(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if p := recover(); p != nil {
				w.WriteHeader(http.StatusInternalServerError)
			}
		}()
		h.ServeHTTP(w, r)
	})
}

// TestMiddleware runs the adapter suite against Middleware around a
// ServeMux.
func TestMiddleware(t *testing.T) {
	adaptertest.Run(t, func(t testing.TB, g *core.Guard, o adaptertest.Options, routes []adaptertest.Route) http.Handler {
		mux := http.NewServeMux()
		for _, rt := range routes {
			mux.HandleFunc(rt.Method+" "+rt.Path, rt.Handler)
		}
		return recoverer(sluicehttp.Middleware(g, options(o)...)(mux))
	})
}

// TestWrap runs the adapter suite against Wrap on every route of a
// ServeMux. Requests that match no route never reach a wrapped handler, so
// they are not limited: that test does not apply.
func TestWrap(t *testing.T) {
	adaptertest.Run(t, func(t testing.TB, g *core.Guard, o adaptertest.Options, routes []adaptertest.Route) http.Handler {
		mux := http.NewServeMux()
		for _, rt := range routes {
			mux.Handle(rt.Method+" "+rt.Path, sluicehttp.Wrap(g, rt.Handler, options(o)...))
		}
		return recoverer(mux)
	}, "UnmatchedShareOneResource")
}
