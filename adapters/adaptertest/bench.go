package adaptertest

import (
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

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
func BenchGuard(t testing.TB) *core.Guard {
	g, err := core.New(core.WithRules(
		core.Rule{Name: "flow", Resource: "*", Kind: core.KindFlow, Limit: 1_000_000_000},
		core.Rule{Name: "per-user", Resource: "*", Kind: core.KindHotspot, Param: "header:X-User-ID", Limit: 1_000_000_000},
	))
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// Bench measures newHandler's handler serving the benchmark routes in
// process (ServeHTTP with a reusable ResponseWriter), serially and in
// parallel:
// "bare" without the middleware (newHandler(nil)), "sluice" with it and
// BenchGuard's rules, "norules" with it and a Guard without rules, and
// "core" without it but behind Enter and Exit of BenchGuard's rules with
// the param's value at hand (the Guard's share). The difference between
// "bare" and "sluice" is what the middleware adds, and between "core" and
// "sluice" what the adapter and the extractor add to the Guard's share; the
// requests carry the header the hotspot rule limits by.
//
// The ResponseWriter is a minimal one reused across requests rather than an
// httptest.ResponseRecorder: a recorder costs five allocations per request,
// whose garbage collection made the differences measured here noise.
func Bench(b *testing.B, newHandler func(g *core.Guard) http.Handler) {
	for _, path := range []struct{ name, url, resource string }{
		{"static", "/hello", "GET /hello"},
		{"param", "/items/42", "GET /items/{id}"},
	} {
		for _, mode := range []string{"bare", "core", "sluice", "norules"} {
			var h http.Handler
			switch mode {
			case "bare":
				h = newHandler(nil)
			case "core":
				h = guardOnly(b, BenchGuard(b), path.resource, newHandler(nil))
			case "sluice":
				h = newHandler(BenchGuard(b))
			case "norules":
				g, err := core.New()
				if err != nil {
					b.Fatal(err)
				}
				h = newHandler(g)
			}
			b.Run(path.name+"/"+mode, func(b *testing.B) { BenchServe(b, h, path.url) })
		}
	}
}

// guardOnly returns next behind the least a middleware can do with g:
// Enter resource with the request's param at hand (no extractor) and Exit,
// the Guard's share of what a middleware adds.
func guardOnly(b *testing.B, g *core.Guard, resource string, next http.Handler) http.Handler {
	params := core.ParamMap{"header:X-User-ID": {"alice"}}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e, err := g.Enter(r.Context(), resource, core.WithParams(params))
		if err != nil {
			b.Error(err)
			return
		}
		next.ServeHTTP(w, r)
		e.Exit(nil)
	})
}

// BenchServe measures h serving GET url (with the X-User-ID header the
// benchmarks' hotspot rule reads) in process, serially ("serial") and on
// every core ("parallel"), with a reusable ResponseWriter; it fails on a
// status other than 200. The request is reused too, with r.Pattern cleared
// before each serving, as a new request has it. Besides the wall time, it
// reports the process's CPU time per request ("cpu-ns/op", every thread's,
// the garbage collector's included), which other processes on a busy
// machine disturb far less.
func BenchServe(b *testing.B, h http.Handler, url string) {
	newReq := func() *http.Request {
		r := httptest.NewRequest(http.MethodGet, url, nil)
		r.Header.Set("X-User-ID", "alice")
		return r
	}
	b.Run("serial", func(b *testing.B) {
		r := newReq()
		w := newBenchWriter()
		b.ReportAllocs()
		defer reportCPU(b)()
		for b.Loop() {
			w.reset()
			r.Pattern = ""
			h.ServeHTTP(w, r)
			if w.status != http.StatusOK {
				b.Fatalf("status %d", w.status)
			}
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		defer reportCPU(b)()
		b.RunParallel(func(pb *testing.PB) {
			r := newReq() // one per goroutine: routers write to the request
			w := newBenchWriter()
			for pb.Next() {
				w.reset()
				r.Pattern = ""
				h.ServeHTTP(w, r)
				if w.status != http.StatusOK {
					b.Errorf("status %d", w.status)
					return
				}
			}
		})
	})
}

// BenchPair measures on and off serving GET url (as BenchServe does,
// serially) in alternating batches of 200 requests, the order of the two
// swapped every round, one round per iteration of b, and reports the 10th
// percentile of each one's time per request over the rounds ("on-ns/op",
// "off-ns/op") and their difference ("added-ns/op"): a machine busy with
// other work slows some batches, rarely all of them, so the low
// percentiles of interleaved batches compare the two far better than
// separate runs. Batches in which the garbage collector ran count little
// for the same reason: BenchServe's "cpu-ns/op" counts its work.
func BenchPair(b *testing.B, on, off http.Handler, url string) {
	const batch = 200
	r := httptest.NewRequest(http.MethodGet, url, nil)
	r.Header.Set("X-User-ID", "alice")
	w := newBenchWriter()
	serve := func(h http.Handler) time.Duration {
		start := time.Now()
		for range batch {
			w.reset()
			r.Pattern = ""
			h.ServeHTTP(w, r)
		}
		d := time.Since(start)
		if w.status != http.StatusOK {
			b.Fatalf("status %d", w.status)
		}
		return d
	}
	var times [2][]time.Duration
	round := 0
	for b.Loop() {
		if round%2 == 0 {
			times[0] = append(times[0], serve(on))
			times[1] = append(times[1], serve(off))
		} else {
			times[1] = append(times[1], serve(off))
			times[0] = append(times[0], serve(on))
		}
		round++
	}
	var p10 [2]float64
	for i := range times {
		slices.Sort(times[i])
		p10[i] = float64(times[i][len(times[i])/10]) / batch
	}
	b.ReportMetric(p10[0], "on-ns/op")
	b.ReportMetric(p10[1], "off-ns/op")
	b.ReportMetric(p10[0]-p10[1], "added-ns/op")
	b.ReportMetric(0, "ns/op") // a round is 400 requests of two kinds
}

// reportCPU starts counting the process's CPU time; the function it
// returns, called when b's loop is done, reports it per iteration as
// "cpu-ns/op".
func reportCPU(b *testing.B) func() {
	start, ok := processCPU()
	return func() {
		end, _ := processCPU()
		if ok && b.N > 0 {
			b.ReportMetric(float64(end-start)/float64(b.N), "cpu-ns/op")
		}
	}
}

// benchWriter is a ResponseWriter that keeps the status and discards the
// body; reset readies it for the next request without allocating.
type benchWriter struct {
	header http.Header
	status int
}

func newBenchWriter() *benchWriter { return &benchWriter{header: http.Header{}} }

func (w *benchWriter) reset() {
	clear(w.header)
	w.status = 0
}

func (w *benchWriter) Header() http.Header { return w.header }

func (w *benchWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
}

func (w *benchWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return len(b), nil
}

// AllocsAdded returns the allocations per request that the middleware
// newHandler builds adds to the handler alone, on the routes of the
// benchmarks ("static", "param") under BenchGuard's rules: what Bench
// reports as the difference between "bare" and "sluice", counted exactly.
// It skips t under the race detector, which changes allocation counts.
func AllocsAdded(t *testing.T, newHandler func(g *core.Guard) http.Handler) map[string]float64 {
	if RaceEnabled {
		t.Skip("allocation counts differ under the race detector")
	}
	added := map[string]float64{}
	for _, path := range []struct{ name, url string }{{"static", "/hello"}, {"param", "/items/42"}} {
		var n [2]float64
		for i, g := range []*core.Guard{nil, BenchGuard(t)} {
			h := newHandler(g)
			r := httptest.NewRequest(http.MethodGet, path.url, nil)
			r.Header.Set("X-User-ID", "alice")
			w := newBenchWriter()
			n[i] = testing.AllocsPerRun(200, func() {
				w.reset()
				r.Pattern = ""
				h.ServeHTTP(w, r)
				if w.status != http.StatusOK {
					t.Fatalf("%s: status %d", path.url, w.status)
				}
			})
		}
		added[path.name] = n[1] - n[0]
	}
	return added
}
