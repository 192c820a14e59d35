package sluicegin_test

import (
	"net/http"
	"testing"

	"github.com/gin-gonic/gin"
	"github.com/stretchr/testify/assert"

	"github.com/sluicekit/sluice/adapters/adaptertest"
	sluicegin "github.com/sluicekit/sluice/adapters/gin"
	"github.com/sluicekit/sluice/core"
)

// benchServer is a gin engine serving the benchmark routes through the
// middleware (without it when g is nil).
func benchServer(g *core.Guard) http.Handler { return benchServerWith(g) }

// benchServerWith is benchServer with options.
func benchServerWith(g *core.Guard, opts ...sluicegin.Option) http.Handler {
	r := gin.New()
	if g != nil {
		r.Use(sluicegin.Middleware(g, opts...))
	}
	for _, rt := range adaptertest.BenchRoutes() {
		h := rt.Handler
		r.Handle(rt.Method, adaptertest.ColonPath(rt.Path), func(c *gin.Context) { h(c.Writer, c.Request) })
	}
	return r
}

// BenchmarkGinMiddleware measures a gin engine with the middleware
// against the same engine without it.
//
//	go -C adapters/gin test -run '^$' -bench Gin -benchmem -count 6 -benchtime 100ms .
func BenchmarkGinMiddleware(b *testing.B) { adaptertest.Bench(b, benchServer) }

// TestAllocs holds the pass path to its allocation budget: none. The
// RateLimit fields' values are carved from blocks that serve ten responses
// or more (TestQuotaFieldsAllocs in httpadapter), which these whole counts
// leave out.
func TestAllocs(t *testing.T) {
	assert.Equal(t, map[string]float64{"static": 0, "param": 0}, adaptertest.AllocsAdded(t, benchServer))
	noFields := func(g *core.Guard) http.Handler { return benchServerWith(g, sluicegin.WithRateLimitFields(false)) }
	assert.Equal(t, map[string]float64{"static": 0, "param": 0}, adaptertest.AllocsAdded(t, noFields), "without the fields")
}
