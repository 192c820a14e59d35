package sluicehttp_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/sluicekit/sluice/adapters/adaptertest"
	sluicehttp "github.com/sluicekit/sluice/adapters/nethttp"
	"github.com/sluicekit/sluice/core"
)

// middlewareServer is a ServeMux serving the benchmark routes, wrapped in
// Middleware (without it when g is nil).
func middlewareServer(g *core.Guard) http.Handler { return middlewareServerWith(g) }

// middlewareServerWith is middlewareServer with options.
func middlewareServerWith(g *core.Guard, opts ...sluicehttp.Option) http.Handler {
	mux := http.NewServeMux()
	for _, rt := range adaptertest.BenchRoutes() {
		mux.HandleFunc(rt.Method+" "+rt.Path, rt.Handler)
	}
	if g == nil {
		return mux
	}
	return sluicehttp.Middleware(g, opts...)(mux)
}

// wrapServer is a ServeMux serving each benchmark route through Wrap
// (without it when g is nil).
func wrapServer(g *core.Guard) http.Handler {
	mux := http.NewServeMux()
	for _, rt := range adaptertest.BenchRoutes() {
		var h http.Handler = rt.Handler
		if g != nil {
			h = sluicehttp.Wrap(g, h)
		}
		mux.Handle(rt.Method+" "+rt.Path, h)
	}
	return mux
}

// BenchmarkNetHTTPMiddleware measures Middleware around a ServeMux against
// the ServeMux alone.
//
//	go test -run '^$' -bench NetHTTP -benchmem -count 6 -benchtime 100ms ./adapters/nethttp
func BenchmarkNetHTTPMiddleware(b *testing.B) { adaptertest.Bench(b, middlewareServer) }

// BenchmarkNetHTTPWrap measures Wrap on each route of a ServeMux against
// the ServeMux alone.
func BenchmarkNetHTTPWrap(b *testing.B) { adaptertest.Bench(b, wrapServer) }

// TestAllocs holds the pass path to its allocation budget: one allocation
// per request (the ResponseWriter), and through
// Middleware one more on a route with wildcards, whose values the ServeMux
// allocates when Middleware routes the request to name it. The RateLimit
// fields add none of their own: their values are carved from blocks that
// serve ten responses or more (TestQuotaFieldsAllocs in httpadapter), which
// these whole counts leave out.
func TestAllocs(t *testing.T) {
	assert.Equal(t, map[string]float64{"static": 1, "param": 2}, adaptertest.AllocsAdded(t, middlewareServer), "Middleware")
	assert.Equal(t, map[string]float64{"static": 1, "param": 1}, adaptertest.AllocsAdded(t, wrapServer), "Wrap")
	noFields := func(g *core.Guard) http.Handler {
		return middlewareServerWith(g, sluicehttp.WithRateLimitFields(false))
	}
	assert.Equal(t, map[string]float64{"static": 1, "param": 2}, adaptertest.AllocsAdded(t, noFields), "Middleware without the fields")
}

// stringWriter is a ResponseWriter with WriteString, as net/http's has.
type stringWriter struct {
	header http.Header
	n      int
}

func (w *stringWriter) Header() http.Header         { return w.header }
func (w *stringWriter) WriteHeader(int)             {}
func (w *stringWriter) Write(b []byte) (int, error) { w.n += len(b); return len(b), nil }
func (w *stringWriter) WriteString(s string) (int, error) {
	w.n += len(s)
	return len(s), nil
}

// TestWriteStringAllocs: a handler's io.WriteString reaches the
// underlying writer's WriteString, so that it costs no more through the
// middleware than a Write of bytes at hand (not a copy of the string).
func TestWriteStringAllocs(t *testing.T) {
	if adaptertest.RaceEnabled {
		t.Skip("allocation counts differ under the race detector")
	}
	body := []byte("ok")
	mux := http.NewServeMux()
	mux.HandleFunc("GET /string", func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "ok") })
	mux.HandleFunc("GET /bytes", func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write(body) })
	h := sluicehttp.Middleware(adaptertest.BenchGuard(t), sluicehttp.WithRateLimitFields(false))(mux)
	allocs := map[string]float64{}
	for _, path := range []string{"/string", "/bytes"} {
		r := httptest.NewRequest(http.MethodGet, path, nil)
		w := &stringWriter{header: http.Header{}}
		allocs[path] = testing.AllocsPerRun(200, func() {
			r.Pattern = ""
			h.ServeHTTP(w, r)
		})
	}
	assert.Equal(t, allocs["/bytes"], allocs["/string"])
}
