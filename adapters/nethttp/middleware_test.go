package sluicehttp_test

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	sluicehttp "github.com/sluicekit/sluice/adapters/nethttp"
	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/clock"
	"github.com/sluicekit/sluice/extractors"
)

func newGuard(t *testing.T, rules ...core.Rule) *core.Guard {
	t.Helper()
	g, err := core.New(core.WithClock(clock.NewFake(0)), core.WithRules(rules...))
	require.NoError(t, err)
	return g
}

// serve serves h on 127.0.0.1:0 until the test ends.
func serve(t *testing.T, h http.Handler) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

func get(t *testing.T, srv *httptest.Server, path string, header ...string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, srv.URL+path, nil)
	require.NoError(t, err)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := srv.Client().Do(req)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res
}

func ok(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "ok") }

func hasStats(g *core.Guard, resource string) bool {
	_, found := g.Stats(resource)
	return found
}

// TestInvalidArguments: a nil Guard or handler panics; an invalid option
// makes New return an error naming it, and Middleware and Wrap panic with
// that error.
func TestInvalidArguments(t *testing.T) {
	g := newGuard(t)
	assert.PanicsWithValue(t, "sluicehttp: Middleware: nil *core.Guard (make one with core.New)", func() { sluicehttp.Middleware(nil) })
	assert.PanicsWithValue(t, "sluicehttp: New: nil *core.Guard (make one with core.New)", func() { _, _ = sluicehttp.New(nil) })
	assert.PanicsWithValue(t, "sluicehttp: Wrap: nil *core.Guard (make one with core.New)", func() { sluicehttp.Wrap(nil, http.NotFoundHandler()) })
	assert.PanicsWithValue(t, "sluicehttp: Middleware: nil http.Handler", func() { sluicehttp.Middleware(g)(nil) })
	assert.PanicsWithValue(t, "sluicehttp: Wrap: nil http.Handler", func() { sluicehttp.Wrap(g, nil) })
	for _, tt := range []struct {
		opt  sluicehttp.Option
		want string
	}{
		{sluicehttp.WithResource(nil), "WithResource: nil function"},
		{sluicehttp.WithSkipper(nil), "WithSkipper: nil function"},
		{sluicehttp.WithBlockHandler(nil), "WithBlockHandler: nil function"},
		{sluicehttp.WithErrorClassifier(nil), "WithErrorClassifier: nil function"},
		{sluicehttp.WithExtractor(nil), "WithExtractor: nil *extractors.Extractor"},
		{sluicehttp.WithCost(nil), "WithCost: nil function"},
		{sluicehttp.WithThrottle(nil), "WithThrottle: nil *throttle.Throttle"},
		{nil, "option 0 is nil"},
	} {
		mw, err := sluicehttp.New(g, tt.opt)
		assert.Nil(t, mw)
		assert.EqualError(t, err, "sluicehttp: New: "+tt.want)
		assert.PanicsWithValue(t, "sluicehttp: Middleware: "+tt.want, func() { sluicehttp.Middleware(g, tt.opt) })
		assert.PanicsWithValue(t, "sluicehttp: Wrap: "+tt.want, func() { sluicehttp.Wrap(g, http.NotFoundHandler(), tt.opt) })
	}
}

// TestMiddlewareHostPattern checks that Middleware names requests by the
// pattern the ServeMux will match, host patterns included, and reads path
// params from it.
func TestMiddlewareHostPattern(t *testing.T) {
	g := newGuard(t, core.Rule{Name: "per-item", Resource: "GET /items/{id}", Kind: core.KindHotspot, Param: "path:id", Limit: 1})
	mux := http.NewServeMux()
	mux.HandleFunc("GET example.com/items/{id}", ok)
	mux.HandleFunc("GET /files/{path...}", ok)
	srv := serve(t, sluicehttp.Middleware(g)(mux))

	do := func(host, path string) int {
		req, err := http.NewRequest(http.MethodGet, srv.URL+path, nil)
		require.NoError(t, err)
		req.Host = host
		res, err := srv.Client().Do(req)
		require.NoError(t, err)
		res.Body.Close()
		return res.StatusCode
	}
	assert.Equal(t, 200, do("example.com", "/items/1"))
	assert.Equal(t, 429, do("example.com", "/items/1"))
	assert.Equal(t, 200, do("example.com", "/items/2"))
	assert.Equal(t, 404, do("other.example", "/items/1"), "the host pattern does not match")
	assert.Equal(t, int64(2), mustStats(t, g, "GET /items/{id}").Pass)
	assert.Equal(t, int64(1), mustStats(t, g, extractors.Unmatched).Pass)
}

// TestMiddlewareCatchAllParam checks a {name...} wildcard as a path param.
func TestMiddlewareCatchAllParam(t *testing.T) {
	g := newGuard(t, core.Rule{Name: "per-file", Resource: "GET /files/{path...}", Kind: core.KindHotspot, Param: "path:path", Limit: 1})
	mux := http.NewServeMux()
	mux.HandleFunc("GET /files/{path...}", ok)
	srv := serve(t, sluicehttp.Middleware(g)(mux))
	assert.Equal(t, 200, get(t, srv, "/files/a/b.txt").StatusCode)
	assert.Equal(t, 429, get(t, srv, "/files/a/b.txt").StatusCode)
	assert.Equal(t, 200, get(t, srv, "/files/a/c.txt").StatusCode)
}

func mustStats(t *testing.T, g *core.Guard, resource string) core.ResourceStats {
	t.Helper()
	st, found := g.Stats(resource)
	require.True(t, found, "no statistics for %q", resource)
	return st
}

// TestMiddlewareWithoutRouter checks Middleware around a handler that is
// not a router: behind a ServeMux it names requests by r.Pattern, alone it
// has no route to name them by.
func TestMiddlewareWithoutRouter(t *testing.T) {
	g := newGuard(t)
	mux := http.NewServeMux()
	mux.Handle("GET /api/", sluicehttp.Middleware(g)(http.HandlerFunc(ok)))
	srv := serve(t, mux)
	assert.Equal(t, 200, get(t, srv, "/api/anything").StatusCode)
	assert.Equal(t, 200, get(t, srv, "/api/else").StatusCode)
	assert.Equal(t, int64(2), mustStats(t, g, "GET /api/").Pass)

	alone := serve(t, sluicehttp.Middleware(g)(http.HandlerFunc(ok)))
	assert.Equal(t, 200, get(t, alone, "/x").StatusCode)
	assert.Equal(t, int64(1), mustStats(t, g, extractors.Unmatched).Pass)
}

func TestWithResource(t *testing.T) {
	g := newGuard(t, core.Rule{Name: "tenants", Resource: "tenant-api", Kind: core.KindFlow, Limit: 2})
	mux := http.NewServeMux()
	mux.HandleFunc("GET /a", ok)
	mux.HandleFunc("GET /b", ok)
	srv := serve(t, sluicehttp.Middleware(g, sluicehttp.WithResource(func(r *http.Request) string { return "tenant-api" }))(mux))
	assert.Equal(t, 200, get(t, srv, "/a").StatusCode)
	assert.Equal(t, 200, get(t, srv, "/b").StatusCode)
	assert.Equal(t, 429, get(t, srv, "/a").StatusCode)
	assert.False(t, hasStats(g, "GET /a"))
}

// TestResponseWriterFeatures checks that a handler behind the middleware
// can still flush, hijack, use sendfile-style copies and set deadlines, and
// that each such response is counted as it ended.
func TestResponseWriterFeatures(t *testing.T) {
	g := newGuard(t)
	flushed := make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("GET /stream", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "first\n")
		w.(http.Flusher).Flush()
		<-flushed // the client has read "first" before the handler returns
		_, _ = io.WriteString(w, "second\n")
	})
	mux.HandleFunc("GET /hijack", func(w http.ResponseWriter, r *http.Request) {
		conn, rw, err := w.(http.Hijacker).Hijack()
		if err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		defer conn.Close()
		_, _ = rw.WriteString("HTTP/1.1 200 OK\r\nContent-Length: 8\r\nConnection: close\r\n\r\nhijacked")
		_ = rw.Flush()
	})
	mux.HandleFunc("GET /copy", func(w http.ResponseWriter, r *http.Request) {
		rf, isRF := w.(io.ReaderFrom)
		if !isRF {
			http.Error(w, "no ReaderFrom", 500)
			return
		}
		_, _ = rf.ReadFrom(strings.NewReader("copied"))
	})
	mux.HandleFunc("GET /string", func(w http.ResponseWriter, r *http.Request) {
		sw, isSW := w.(io.StringWriter)
		if !isSW {
			http.Error(w, "no StringWriter", 500)
			return
		}
		_, _ = sw.WriteString("string")
	})
	mux.HandleFunc("GET /deadline", func(w http.ResponseWriter, r *http.Request) {
		if err := http.NewResponseController(w).SetWriteDeadline(time.Now().Add(time.Minute)); err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		_, _ = io.WriteString(w, "deadline set")
	})
	srv := serve(t, sluicehttp.Middleware(g)(mux))

	t.Run("flush", func(t *testing.T) {
		res, err := srv.Client().Get(srv.URL + "/stream")
		require.NoError(t, err)
		defer res.Body.Close()
		br := bufio.NewReader(res.Body)
		line, err := br.ReadString('\n')
		require.NoError(t, err)
		assert.Equal(t, "first\n", line)
		close(flushed)
		rest, err := io.ReadAll(br)
		require.NoError(t, err)
		assert.Equal(t, "second\n", string(rest))
	})
	t.Run("hijack", func(t *testing.T) {
		conn, err := net.Dial("tcp", srv.Listener.Addr().String())
		require.NoError(t, err)
		defer conn.Close()
		_, err = io.WriteString(conn, "GET /hijack HTTP/1.1\r\nHost: x\r\n\r\n")
		require.NoError(t, err)
		res, err := http.ReadResponse(bufio.NewReader(conn), nil)
		require.NoError(t, err)
		body, _ := io.ReadAll(res.Body)
		assert.Equal(t, "hijacked", string(body))
	})
	t.Run("ReaderFrom", func(t *testing.T) {
		res, err := srv.Client().Get(srv.URL + "/copy")
		require.NoError(t, err)
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		assert.Equal(t, 200, res.StatusCode)
		assert.Equal(t, "copied", string(body))
	})
	t.Run("StringWriter", func(t *testing.T) {
		res, err := srv.Client().Get(srv.URL + "/string")
		require.NoError(t, err)
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		assert.Equal(t, 200, res.StatusCode)
		assert.Equal(t, "string", string(body))
	})
	t.Run("ResponseController", func(t *testing.T) {
		res, err := srv.Client().Get(srv.URL + "/deadline")
		require.NoError(t, err)
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		assert.Equal(t, "deadline set", string(body))
	})
	for _, resource := range []string{"GET /stream", "GET /hijack", "GET /copy", "GET /string", "GET /deadline"} {
		// A hijacked connection's client can read the whole response
		// before the handler returns and the request exits: wait for it.
		require.Eventually(t, func() bool { return mustStats(t, g, resource).Complete == 1 }, 10*time.Second, time.Millisecond, resource)
		assert.Zero(t, mustStats(t, g, resource).Error, resource)
	}
}

// TestStatusRecorded checks that the classifier sees the status the
// handler wrote, however it wrote it.
func TestStatusRecorded(t *testing.T) {
	seen := make(chan int, 8)
	g := newGuard(t)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /none", func(w http.ResponseWriter, r *http.Request) {})
	mux.HandleFunc("GET /body", ok)
	mux.HandleFunc("GET /created", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(201) })
	mux.HandleFunc("GET /early-hints", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(103)
		w.WriteHeader(502)
	})
	mux.HandleFunc("GET /twice", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(500)
		w.WriteHeader(200) // ignored by net/http, and by the recorder
	})
	srv := serve(t, sluicehttp.Middleware(g, sluicehttp.WithErrorClassifier(func(status int, err error) bool {
		assert.NoError(t, err)
		seen <- status
		return false
	}))(mux))
	for path, want := range map[string]int{"/none": 200, "/body": 200, "/created": 201, "/early-hints": 502, "/twice": 500, "/nope": 404} {
		res := get(t, srv, path)
		assert.Equal(t, want, res.StatusCode, path)
		assert.Equal(t, want, <-seen, path)
	}
}

// TestBlockHandlerWrapsDefault checks that a block handler gets the
// Guard's verdict and can add to the default response.
func TestBlockHandlerWrapsDefault(t *testing.T) {
	g := newGuard(t, core.Rule{Name: "none", Resource: "GET /x", Kind: core.KindFlow, Limit: 0})
	var got *core.BlockedError
	mux := http.NewServeMux()
	mux.HandleFunc("GET /x", ok)
	srv := serve(t, sluicehttp.Middleware(g, sluicehttp.WithBlockHandler(func(w http.ResponseWriter, r *http.Request, b *core.BlockedError) {
		got = b
		w.Header().Set("X-Limited", "yes")
		sluicehttp.DefaultBlockHandler(w, r, b)
	}))(mux))
	res := get(t, srv, "/x")
	assert.Equal(t, 403, res.StatusCode, "a limit of 0: never passes")
	require.NotNil(t, got)
	assert.True(t, errors.Is(got, core.ErrBlocked))
	assert.Equal(t, "GET /x", got.Resource)
	assert.Equal(t, "none", got.Rule)
	assert.True(t, got.Never)
	assert.Empty(t, res.Header.Get("RateLimit-Policy"), "no reset time for a request that never passes")
	assert.Equal(t, "yes", res.Header.Get("X-Limited"))
}

// TestHeadCountsAsGet checks that the HEAD requests a GET pattern serves
// are limited as the GET route, with Middleware and with Wrap.
func TestHeadCountsAsGet(t *testing.T) {
	rule := core.Rule{Name: "hello-rate", Resource: "GET /hello", Kind: core.KindFlow, Limit: 2}
	head := func(srv *httptest.Server, path string) int {
		res, err := srv.Client().Head(srv.URL + path)
		require.NoError(t, err)
		res.Body.Close()
		return res.StatusCode
	}
	t.Run("Middleware", func(t *testing.T) {
		g := newGuard(t, rule)
		mux := http.NewServeMux()
		mux.HandleFunc("GET /hello", ok)
		mux.HandleFunc("/any", ok)
		srv := serve(t, sluicehttp.Middleware(g)(mux))
		assert.Equal(t, 200, get(t, srv, "/hello").StatusCode)
		assert.Equal(t, 200, head(srv, "/hello"))
		assert.Equal(t, 429, head(srv, "/hello"))
		assert.Equal(t, 429, get(t, srv, "/hello").StatusCode)
		assert.Equal(t, 200, head(srv, "/any"))
		assert.True(t, hasStats(g, "HEAD /any"), "a pattern without a method takes the request's")
	})
	t.Run("Wrap", func(t *testing.T) {
		g := newGuard(t, rule)
		mux := http.NewServeMux()
		mux.Handle("GET /hello", sluicehttp.Wrap(g, http.HandlerFunc(ok)))
		srv := serve(t, mux)
		assert.Equal(t, 200, head(srv, "/hello"))
		assert.Equal(t, 200, get(t, srv, "/hello").StatusCode)
		assert.Equal(t, 429, head(srv, "/hello"))
		assert.False(t, hasStats(g, "HEAD /hello"))
	})
}
