package sluiceecho_test

import (
	"net/http"
	"testing"

	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/assert"

	"github.com/sluicekit/sluice/adapters/adaptertest"
	sluiceecho "github.com/sluicekit/sluice/adapters/echo"
	"github.com/sluicekit/sluice/core"
)

// benchServer is an Echo serving the benchmark routes through the
// middleware (without it when g is nil).
func benchServer(g *core.Guard) http.Handler { return benchServerWith(g) }

// benchServerWith is benchServer with options.
func benchServerWith(g *core.Guard, opts ...sluiceecho.Option) http.Handler {
	e := echo.New()
	if g != nil {
		e.Use(sluiceecho.Middleware(g, opts...))
	}
	for _, rt := range adaptertest.BenchRoutes() {
		h := rt.Handler
		e.Add(rt.Method, adaptertest.ColonPath(rt.Path), func(c echo.Context) error {
			h(c.Response(), c.Request())
			return nil
		})
	}
	return e
}

// BenchmarkEchoMiddleware measures an Echo with the middleware against the
// same Echo without it.
//
//	go -C adapters/echo test -run '^$' -bench Echo -benchmem -count 6 -benchtime 100ms .
func BenchmarkEchoMiddleware(b *testing.B) { adaptertest.Bench(b, benchServer) }

// TestAllocs holds the pass path to its allocation budget: the one
// allocation echo makes for any e.Use middleware (see
// BenchmarkEchoNoopMiddleware), none of the middleware's own. The RateLimit
// fields' values are carved from blocks that serve ten responses or more
// (TestQuotaFieldsAllocs in httpadapter), which these whole counts leave
// out.
func TestAllocs(t *testing.T) {
	assert.Equal(t, map[string]float64{"static": 1, "param": 1}, adaptertest.AllocsAdded(t, benchServer))
	noFields := func(g *core.Guard) http.Handler { return benchServerWith(g, sluiceecho.WithRateLimitFields(false)) }
	assert.Equal(t, map[string]float64{"static": 1, "param": 1}, adaptertest.AllocsAdded(t, noFields), "without the fields")
}

// BenchmarkEchoNoopMiddleware measures an Echo with one e.Use middleware
// that only calls the next handler ("noop") against the same Echo without
// it ("bare"): the cost echo puts on any middleware, which builds the
// chain for every request and so allocates the function each middleware
// returns (one allocation per middleware and request; the "sluice" mode of
// BenchmarkEchoMiddleware has this one and no other of its own).
func BenchmarkEchoNoopMiddleware(b *testing.B) {
	for _, noop := range []bool{false, true} {
		e := echo.New()
		name := "bare"
		if noop {
			name = "noop"
			e.Use(func(next echo.HandlerFunc) echo.HandlerFunc {
				return func(c echo.Context) error { return next(c) }
			})
		}
		h := adaptertest.BenchRoutes()[0].Handler // GET /hello
		e.GET("/hello", func(c echo.Context) error {
			h(c.Response(), c.Request())
			return nil
		})
		b.Run(name, func(b *testing.B) { adaptertest.BenchServe(b, e, "/hello") })
	}
}
