package sluicegin_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/gin-gonic/gin"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	sluicegin "github.com/sluicekit/sluice/adapters/gin"
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

func serve(t *testing.T, h http.Handler) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

func do(t *testing.T, srv *httptest.Server, method, path string) int {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+path, nil)
	require.NoError(t, err)
	res, err := srv.Client().Do(req)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res.StatusCode
}

func mustStats(t *testing.T, g *core.Guard, resource string) core.ResourceStats {
	t.Helper()
	st, found := g.Stats(resource)
	require.True(t, found, "no statistics for %q", resource)
	return st
}

// TestInvalidArguments: a nil Guard panics; an invalid option makes New
// return an error naming it, and Middleware panic with that error.
func TestInvalidArguments(t *testing.T) {
	assert.PanicsWithValue(t, "sluicegin: Middleware: nil *core.Guard (make one with core.New)", func() { sluicegin.Middleware(nil) })
	assert.PanicsWithValue(t, "sluicegin: New: nil *core.Guard (make one with core.New)", func() { _, _ = sluicegin.New(nil) })
	g := newGuard(t)
	for _, tt := range []struct {
		opt  sluicegin.Option
		want string
	}{
		{sluicegin.WithResource(nil), "WithResource: nil function"},
		{sluicegin.WithSkipper(nil), "WithSkipper: nil function"},
		{sluicegin.WithBlockHandler(nil), "WithBlockHandler: nil function"},
		{sluicegin.WithErrorClassifier(nil), "WithErrorClassifier: nil function"},
		{sluicegin.WithExtractor(nil), "WithExtractor: nil *extractors.Extractor"},
		{sluicegin.WithCost(nil), "WithCost: nil function"},
		{sluicegin.WithRoutes(nil), "WithRoutes: nil *gin.Engine"},
		{nil, "option 0 is nil"},
	} {
		h, err := sluicegin.New(g, tt.opt)
		assert.Nil(t, h)
		assert.EqualError(t, err, "sluicegin: New: "+tt.want)
		assert.PanicsWithValue(t, "sluicegin: Middleware: "+tt.want, func() { sluicegin.Middleware(g, tt.opt) })
	}
}

// TestContextErrors checks that errors handlers attach with c.Error count
// as errors by default, but for a response with a client error status,
// and reach a custom classifier.
func TestContextErrors(t *testing.T) {
	g := newGuard(t)
	seen := make(chan error, 1)
	r := gin.New()
	r.Use(sluicegin.Middleware(g))
	r.GET("/soft", func(c *gin.Context) {
		_ = c.Error(errors.New("partial failure"))
		c.String(http.StatusOK, "ok")
	})
	r.GET("/bad-request", func(c *gin.Context) {
		_ = c.AbortWithError(http.StatusBadRequest, errors.New("bad input"))
	})
	r2 := gin.New()
	r2.Use(sluicegin.Middleware(g, sluicegin.WithErrorClassifier(func(status int, err error) bool {
		seen <- err
		return status >= 500
	})))
	r2.GET("/custom", func(c *gin.Context) {
		_ = c.Error(errors.New("ignored by the classifier"))
		c.Status(http.StatusOK)
	})
	srv := serve(t, r)
	srv2 := serve(t, r2)
	assert.Equal(t, 200, do(t, srv, "GET", "/soft"))
	assert.Equal(t, 400, do(t, srv, "GET", "/bad-request"))
	assert.Equal(t, 200, do(t, srv2, "GET", "/custom"))
	assert.Equal(t, int64(1), mustStats(t, g, "GET /soft").Error)
	assert.Zero(t, mustStats(t, g, "GET /bad-request").Error)
	assert.Zero(t, mustStats(t, g, "GET /custom").Error)
	err := <-seen
	require.Error(t, err)
	assert.Equal(t, "ignored by the classifier", err.Error())
}

// TestMethodNotAllowed checks that gin's 405 responses are unmatched too.
func TestMethodNotAllowed(t *testing.T) {
	g := newGuard(t)
	r := gin.New()
	r.HandleMethodNotAllowed = true
	r.Use(sluicegin.Middleware(g))
	r.GET("/hello", func(c *gin.Context) { c.String(200, "hello") })
	srv := serve(t, r)
	assert.Equal(t, 405, do(t, srv, "POST", "/hello"))
	assert.Equal(t, 404, do(t, srv, "GET", "/nope"))
	assert.Equal(t, int64(2), mustStats(t, g, extractors.Unmatched).Pass)
	_, found := g.Stats("POST /hello")
	assert.False(t, found)
}

// TestCatchAll checks a gin catch-all route as a resource and a path
// param.
func TestCatchAll(t *testing.T) {
	g := newGuard(t, core.Rule{Name: "per-file", Resource: "GET /files/{path...}", Kind: core.KindHotspot, Param: "path:path", Limit: 1})
	r := gin.New()
	r.Use(sluicegin.Middleware(g))
	r.GET("/files/*path", func(c *gin.Context) { c.String(200, c.Param("path")) })
	srv := serve(t, r)
	assert.Equal(t, 200, do(t, srv, "GET", "/files/a/b.txt"))
	assert.Equal(t, 429, do(t, srv, "GET", "/files/a/b.txt"))
	assert.Equal(t, 200, do(t, srv, "GET", "/files/a/c.txt"))
	assert.Equal(t, int64(2), mustStats(t, g, "GET /files/{path...}").Pass)
}

func TestWithResource(t *testing.T) {
	g := newGuard(t, core.Rule{Name: "api", Resource: "api", Kind: core.KindFlow, Limit: 2})
	r := gin.New()
	r.Use(sluicegin.Middleware(g, sluicegin.WithResource(func(c *gin.Context) string { return "api" })))
	r.GET("/a", func(c *gin.Context) { c.Status(200) })
	r.GET("/b", func(c *gin.Context) { c.Status(200) })
	srv := serve(t, r)
	assert.Equal(t, 200, do(t, srv, "GET", "/a"))
	assert.Equal(t, 200, do(t, srv, "GET", "/b"))
	assert.Equal(t, 429, do(t, srv, "GET", "/a"))
}

// TestBlockedAbortsChain checks that the handlers after the middleware do
// not run for a blocked request, and those before it see the response.
func TestBlockedAbortsChain(t *testing.T) {
	g := newGuard(t, core.Rule{Name: "none", Resource: "GET /x", Kind: core.KindFlow, Limit: 0})
	before := make(chan int, 1)
	var after atomic.Int64
	r := gin.New()
	r.Use(func(c *gin.Context) {
		c.Next()
		before <- c.Writer.Status()
	})
	r.Use(sluicegin.Middleware(g))
	r.Use(func(c *gin.Context) { after.Add(1) })
	r.GET("/x", func(c *gin.Context) { after.Add(1) })
	srv := serve(t, r)
	assert.Equal(t, 403, do(t, srv, "GET", "/x"), "a limit of 0: never passes")
	assert.Equal(t, 403, <-before)
	assert.Zero(t, after.Load())
}
