package sluiceecho_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	sluiceecho "github.com/sluicekit/sluice/adapters/echo"
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

func newEchoWith(g *core.Guard, opts ...sluiceecho.Option) *echo.Echo {
	e := echo.New()
	e.Logger.SetOutput(io.Discard)
	e.Use(sluiceecho.Middleware(g, opts...))
	return e
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
	assert.PanicsWithValue(t, "sluiceecho: Middleware: nil *core.Guard (make one with core.New)", func() { sluiceecho.Middleware(nil) })
	assert.PanicsWithValue(t, "sluiceecho: New: nil *core.Guard (make one with core.New)", func() { _, _ = sluiceecho.New(nil) })
	g := newGuard(t)
	for _, tt := range []struct {
		opt  sluiceecho.Option
		want string
	}{
		{sluiceecho.WithResource(nil), "WithResource: nil function"},
		{sluiceecho.WithSkipper(nil), "WithSkipper: nil function"},
		{sluiceecho.WithBlockHandler(nil), "WithBlockHandler: nil function"},
		{sluiceecho.WithErrorClassifier(nil), "WithErrorClassifier: nil function"},
		{sluiceecho.WithExtractor(nil), "WithExtractor: nil *extractors.Extractor"},
		{sluiceecho.WithCost(nil), "WithCost: nil function"},
		{nil, "option 0 is nil"},
	} {
		mw, err := sluiceecho.New(g, tt.opt)
		assert.Nil(t, mw)
		assert.EqualError(t, err, "sluiceecho: New: "+tt.want)
		assert.PanicsWithValue(t, "sluiceecho: Middleware: "+tt.want, func() { sluiceecho.Middleware(g, tt.opt) })
	}
}

// TestReturnedErrors checks how the default classifier counts the errors
// echo handlers return, and that they reach echo's error handler as they
// were.
func TestReturnedErrors(t *testing.T) {
	g := newGuard(t)
	e := newEchoWith(g)
	e.GET("/not-found", func(c echo.Context) error { return echo.ErrNotFound })
	e.GET("/bad", func(c echo.Context) error { return echo.NewHTTPError(http.StatusBadRequest, "bad input") })
	e.GET("/unavailable", func(c echo.Context) error { return echo.NewHTTPError(http.StatusServiceUnavailable) })
	e.GET("/plain", func(c echo.Context) error { return errors.New("database down") })
	e.GET("/written", func(c echo.Context) error {
		_ = c.String(http.StatusTeapot, "short and stout")
		return errors.New("after the response")
	})
	srv := serve(t, e)
	for path, want := range map[string]struct {
		status int
		errors int64
	}{
		"/not-found": {404, 0}, "/bad": {400, 0}, "/unavailable": {503, 1}, "/plain": {500, 1}, "/written": {418, 1},
	} {
		assert.Equal(t, want.status, do(t, srv, "GET", path), path)
		st := mustStats(t, g, "GET "+path)
		assert.Equal(t, int64(1), st.Complete, path)
		assert.Equal(t, want.errors, st.Error, path)
	}
}

// TestClassifierStatus checks the status a custom classifier gets: the
// one written, or the one echo's error handler will write.
func TestClassifierStatus(t *testing.T) {
	type outcome struct {
		status int
		err    error
	}
	seen := make(chan outcome, 1)
	g := newGuard(t)
	e := newEchoWith(g, sluiceecho.WithErrorClassifier(func(status int, err error) bool {
		seen <- outcome{status, err}
		return false
	}))
	boom := errors.New("boom")
	e.GET("/ok", func(c echo.Context) error { return c.NoContent(http.StatusNoContent) })
	e.GET("/none", func(c echo.Context) error { return nil })
	e.GET("/boom", func(c echo.Context) error { return boom })
	e.GET("/gone", func(c echo.Context) error { return echo.NewHTTPError(http.StatusGone) })
	srv := serve(t, e)
	assert.Equal(t, 204, do(t, srv, "GET", "/ok"))
	assert.Equal(t, outcome{204, nil}, <-seen)
	assert.Equal(t, 200, do(t, srv, "GET", "/none"))
	assert.Equal(t, outcome{200, nil}, <-seen)
	assert.Equal(t, 500, do(t, srv, "GET", "/boom"))
	assert.Equal(t, outcome{500, boom}, <-seen)
	assert.Equal(t, 410, do(t, srv, "GET", "/gone"))
	o := <-seen
	assert.Equal(t, 410, o.status)
	assert.Error(t, o.err)
}

// TestRouteNotFound checks that a route registered with RouteNotFound is
// a route with its own resource, while echo's own 404 and 405 are
// unmatched.
func TestRouteNotFound(t *testing.T) {
	g := newGuard(t)
	e := newEchoWith(g)
	e.GET("/hello", func(c echo.Context) error { return c.String(200, "hello") })
	api := e.Group("/api")
	api.RouteNotFound("/*", func(c echo.Context) error { return c.NoContent(http.StatusNotFound) })
	srv := serve(t, e)
	assert.Equal(t, 404, do(t, srv, "GET", "/api/nope"))
	assert.Equal(t, 404, do(t, srv, "GET", "/nope"))
	assert.Equal(t, 405, do(t, srv, "POST", "/hello"))
	assert.Equal(t, int64(1), mustStats(t, g, "GET /api/{*...}").Pass)
	assert.Equal(t, int64(2), mustStats(t, g, extractors.Unmatched).Pass)
}

func TestWithResource(t *testing.T) {
	g := newGuard(t, core.Rule{Name: "api", Resource: "api", Kind: core.KindFlow, Limit: 2})
	e := newEchoWith(g, sluiceecho.WithResource(func(c echo.Context) string { return "api" }))
	e.GET("/a", func(c echo.Context) error { return c.NoContent(200) })
	e.GET("/b", func(c echo.Context) error { return c.NoContent(200) })
	srv := serve(t, e)
	assert.Equal(t, 200, do(t, srv, "GET", "/a"))
	assert.Equal(t, 200, do(t, srv, "GET", "/b"))
	assert.Equal(t, 429, do(t, srv, "GET", "/a"))
}

// TestGroupMiddleware checks the middleware on a route group: echo builds
// that chain once, for every request of the group.
func TestGroupMiddleware(t *testing.T) {
	g := newGuard(t, core.Rule{Name: "per-item", Resource: "GET /api/items/{id}", Kind: core.KindHotspot, Param: "path:id", Limit: 1})
	e := echo.New()
	api := e.Group("/api", sluiceecho.Middleware(g))
	api.GET("/items/:id", func(c echo.Context) error { return c.String(200, c.Param("id")) })
	e.GET("/free", func(c echo.Context) error { return c.NoContent(200) })
	srv := serve(t, e)
	assert.Equal(t, 200, do(t, srv, "GET", "/api/items/1"))
	assert.Equal(t, 429, do(t, srv, "GET", "/api/items/1"))
	assert.Equal(t, 200, do(t, srv, "GET", "/api/items/2"))
	assert.Equal(t, 200, do(t, srv, "GET", "/free"))
	_, found := g.Stats("GET /free")
	assert.False(t, found)
}
