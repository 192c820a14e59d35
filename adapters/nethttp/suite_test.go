package sluicehttp_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/sluicekit/sluice/adapters/adaptertest"
	sluicehttp "github.com/sluicekit/sluice/adapters/nethttp"
	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/extractors"
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
	if o.NoRateLimitFields {
		opts = append(opts, sluicehttp.WithRateLimitFields(false))
	}
	if o.Auth {
		x, err := extractors.New(extractors.WithContextParam("user", adaptertest.AuthContextKey{}))
		if err != nil {
			panic(err)
		}
		opts = append(opts, sluicehttp.WithExtractor(x))
	}
	if o.Cost {
		opts = append(opts, sluicehttp.WithCost(func(r *http.Request) int64 { return adaptertest.Cost(r.Header) }))
	}
	if o.BlockStatus != 0 {
		opts = append(opts, sluicehttp.WithBlockHandler(func(w http.ResponseWriter, r *http.Request, b *core.BlockedError) {
			w.Header().Set("X-Blocked-By", b.Rule)
			w.WriteHeader(o.BlockStatus)
		}))
	}
	return opts
}

// failing returns h, which then writes 502 when fail returns an error for
// the request (adaptertest.Options.Fail).
func failing(h http.HandlerFunc, fail func(*http.Request) error) http.Handler {
	if fail == nil {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h(w, r)
		if fail(r) != nil {
			w.WriteHeader(http.StatusBadGateway)
		}
	})
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

// authenticate stores the user of the request's adaptertest.AuthHeader in
// its context, as an authentication middleware would.
func authenticate(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if user := r.Header.Get(adaptertest.AuthHeader); user != "" {
			r = r.WithContext(context.WithValue(r.Context(), adaptertest.AuthContextKey{}, user))
		}
		h.ServeHTTP(w, r)
	})
}

// TestMiddleware runs the adapter suite against Middleware around a
// ServeMux.
func TestMiddleware(t *testing.T) {
	adaptertest.Run(t, func(t testing.TB, g *core.Guard, o adaptertest.Options, routes []adaptertest.Route) http.Handler {
		mux := http.NewServeMux()
		for _, rt := range routes {
			mux.Handle(rt.Method+" "+rt.Path, failing(rt.Handler, o.Fail))
		}
		return recoverer(authenticate(sluicehttp.Middleware(g, options(o)...)(mux)))
	}, "FrameworkClientIP") // net/http has no proxy settings but the Extractor's
}

// TestWrap runs the adapter suite against Wrap on every route of a
// ServeMux. Requests that match no route never reach a wrapped handler, so
// they are not limited: that test does not apply.
func TestWrap(t *testing.T) {
	adaptertest.Run(t, func(t testing.TB, g *core.Guard, o adaptertest.Options, routes []adaptertest.Route) http.Handler {
		mux := http.NewServeMux()
		for _, rt := range routes {
			mux.Handle(rt.Method+" "+rt.Path, sluicehttp.Wrap(g, failing(rt.Handler, o.Fail), options(o)...))
		}
		return recoverer(authenticate(mux))
	}, "UnmatchedShareOneResource", "FrameworkClientIP")
}
