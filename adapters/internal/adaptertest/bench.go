package adaptertest

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/sluicekit/sluice/core"
)

// BenchRoutes are the routes of the benchmarks: a static one and one with
// a path parameter, both answering 200 with a short body.
func BenchRoutes() []Route {
	ok := func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "ok") }
	return []Route{
		{"GET", "/hello", ok},
		{"GET", "/items/{id}", ok},
	}
}

// BenchGuard returns a Guard with the benchmarks' rules: one flow rule and
// one hotspot rule on a header for every resource, with limits no
// benchmark reaches, so that every request passes both.
func BenchGuard(b *testing.B) *core.Guard {
	g, err := core.New(core.WithRules(
		core.Rule{Name: "flow", Resource: "*", Kind: core.KindFlow, Limit: 1_000_000_000},
		core.Rule{Name: "per-user", Resource: "*", Kind: core.KindHotspot, Param: "header:X-User-ID", Limit: 1_000_000_000},
	))
	if err != nil {
		b.Fatal(err)
	}
	return g
}

// Bench measures newHandler's handler serving the benchmark routes in
// process (httptest.NewRecorder and ServeHTTP), serially and in parallel,
// without the middleware (newHandler(nil)) and with it. The difference
// between "bare" and "sluice" is what the middleware adds; the requests
// carry the header the hotspot rule limits by.
func Bench(b *testing.B, newHandler func(g *core.Guard) http.Handler) {
	for _, path := range []struct{ name, url string }{{"static", "/hello"}, {"param", "/items/42"}} {
		for _, mode := range []struct {
			name  string
			guard bool
		}{{"bare", false}, {"sluice", true}} {
			var g *core.Guard
			if mode.guard {
				g = BenchGuard(b)
			}
			h := newHandler(g)
			newReq := func() *http.Request {
				r := httptest.NewRequest(http.MethodGet, path.url, nil)
				r.Header.Set("X-User-ID", "alice")
				return r
			}
			b.Run(path.name+"/"+mode.name+"/serial", func(b *testing.B) {
				r := newReq()
				b.ReportAllocs()
				for b.Loop() {
					w := httptest.NewRecorder()
					h.ServeHTTP(w, r)
					if w.Code != http.StatusOK {
						b.Fatalf("status %d", w.Code)
					}
				}
			})
			b.Run(path.name+"/"+mode.name+"/parallel", func(b *testing.B) {
				b.ReportAllocs()
				b.RunParallel(func(pb *testing.PB) {
					r := newReq() // one per goroutine: routers write to the request
					for pb.Next() {
						w := httptest.NewRecorder()
						h.ServeHTTP(w, r)
						if w.Code != http.StatusOK {
							b.Errorf("status %d", w.Code)
							return
						}
					}
				})
			})
		}
	}
}
