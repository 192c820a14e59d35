package sluiceecho_test

import (
	"io"
	"net/http"
	"testing"

	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/assert"

	sluiceecho "github.com/sluicekit/sluice/adapters/echo"
	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/extractors"
)

// TestGroupMiddlewareKeepsNotFoundUnmatched: echo's Group.Use registers
// catch-all routes of its own (RouteNotFound at the prefix and prefix/*,
// answered by echo.NotFoundHandler) so that a group's middleware runs for
// its 404s. Requests echo answers 404 there matched no route of the
// application: they are extractors.Unmatched, as every other 404, whether
// the sluice middleware is the group's or the server's and another
// middleware is the group's (an auth check on /admin, say). Before, they
// were named "GET /api/{*...}", "POST /api/{*...}" and "GET /api": a rule
// on (unmatched) never saw them (3 of 3 scans passed a limit of 1 each).
// A RouteNotFound route the application registers with a handler of its
// own stays a route with its template (TestRouteNotFound).
func TestGroupMiddlewareKeepsNotFoundUnmatched(t *testing.T) {
	passThrough := func(next echo.HandlerFunc) echo.HandlerFunc { return next }
	ok := func(c echo.Context) error { return c.String(http.StatusOK, "ok") }
	for name, build := range map[string]func(g *core.Guard) *echo.Echo{
		"sluice on the group": func(g *core.Guard) *echo.Echo {
			e := echo.New()
			api := e.Group("/api", sluiceecho.Middleware(g))
			api.GET("/items/:id", ok)
			return e
		},
		"sluice on the server, another middleware on the group": func(g *core.Guard) *echo.Echo {
			e := echo.New()
			e.Use(sluiceecho.Middleware(g))
			api := e.Group("/api", passThrough)
			api.GET("/items/:id", ok)
			return e
		},
	} {
		t.Run(name, func(t *testing.T) {
			g := newGuard(t, core.Rule{Name: "scans", Resource: extractors.Unmatched, Kind: core.KindFlow, Limit: 1})
			e := build(g)
			e.Logger.SetOutput(io.Discard)
			srv := serve(t, e)
			assert.Equal(t, 200, do(t, srv, "GET", "/api/items/1"))
			assert.Equal(t, 404, do(t, srv, "GET", "/api/nope"), "the first scan passes")
			for _, path := range []string{"/api/nope", "/api", "/api/other/x"} {
				assert.Equal(t, 429, do(t, srv, "GET", path), "GET %s: a scan beyond the limit", path)
			}
			assert.Equal(t, 429, do(t, srv, "POST", "/api/items/1"), "a wrong method")
			for _, r := range g.Snapshot().Resources {
				assert.Contains(t, []string{"GET /api/items/{id}", extractors.Unmatched}, r.Resource)
			}
			st := mustStats(t, g, extractors.Unmatched)
			assert.Equal(t, int64(1), st.Pass)
			assert.Equal(t, int64(4), st.Block)
		})
	}
}

// TestRootGroupMiddlewareKeepsItsRoutes: with the middleware on the group
// of the whole server (prefix ""), echo's catch-all routes sit at "/" and
// "/*": a route of the application at "/" is still its own resource, and
// only the methods it does not serve there are unmatched.
func TestRootGroupMiddlewareKeepsItsRoutes(t *testing.T) {
	g := newGuard(t)
	e := echo.New()
	e.Logger.SetOutput(io.Discard)
	root := e.Group("", sluiceecho.Middleware(g))
	root.GET("/", func(c echo.Context) error { return c.String(http.StatusOK, "home") })
	srv := serve(t, e)
	assert.Equal(t, 200, do(t, srv, "GET", "/"))
	assert.Equal(t, 404, do(t, srv, "POST", "/"))
	assert.Equal(t, 404, do(t, srv, "GET", "/nope"))
	assert.Equal(t, int64(1), mustStats(t, g, "GET /").Pass)
	assert.Equal(t, int64(2), mustStats(t, g, extractors.Unmatched).Pass)
}
