package sluiceecho_test

import (
	"net/http"
	"testing"

	"github.com/labstack/echo/v4"

	sluiceecho "github.com/sluicekit/sluice/adapters/echo"
	"github.com/sluicekit/sluice/adapters/internal/adaptertest"
	"github.com/sluicekit/sluice/core"
)

// BenchmarkEchoMiddleware measures an Echo with the middleware against the
// same Echo without it.
func BenchmarkEchoMiddleware(b *testing.B) {
	adaptertest.Bench(b, func(g *core.Guard) http.Handler {
		e := echo.New()
		if g != nil {
			e.Use(sluiceecho.New(g))
		}
		for _, rt := range adaptertest.BenchRoutes() {
			h := rt.Handler
			e.Add(rt.Method, adaptertest.ColonPath(rt.Path), func(c echo.Context) error {
				h(c.Response(), c.Request())
				return nil
			})
		}
		return e
	})
}
