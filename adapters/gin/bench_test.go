package sluicegin_test

import (
	"net/http"
	"testing"

	"github.com/gin-gonic/gin"

	sluicegin "github.com/sluicekit/sluice/adapters/gin"
	"github.com/sluicekit/sluice/adapters/internal/adaptertest"
	"github.com/sluicekit/sluice/core"
)

// BenchmarkGinMiddleware measures a gin engine with the middleware
// against the same engine without it.
func BenchmarkGinMiddleware(b *testing.B) {
	adaptertest.Bench(b, func(g *core.Guard) http.Handler {
		r := gin.New()
		if g != nil {
			r.Use(sluicegin.New(g))
		}
		for _, rt := range adaptertest.BenchRoutes() {
			h := rt.Handler
			r.Handle(rt.Method, adaptertest.ColonPath(rt.Path), func(c *gin.Context) { h(c.Writer, c.Request) })
		}
		return r
	})
}
