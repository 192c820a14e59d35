package sluicegin_test

import (
	"testing"

	"github.com/gin-gonic/gin"

	sluicegin "github.com/sluicekit/sluice/adapters/gin"
	"github.com/sluicekit/sluice/adapters/internal/adaptertest"
)

// BenchmarkRateLimitFields measures the middleware on a route with a path
// parameter under adaptertest.BenchGuard's two rate rules, with the
// RateLimit fields on admitted responses ("on", the default) and without
// them ("off"):
//
//	go test -run '^$' -bench RateLimitFields -benchmem .
func BenchmarkRateLimitFields(b *testing.B) {
	for _, off := range []bool{false, true} {
		r := gin.New()
		var opts []sluicegin.Option
		name := "on"
		if off {
			opts, name = append(opts, sluicegin.WithRateLimitFields(false)), "off"
		}
		r.Use(sluicegin.Middleware(adaptertest.BenchGuard(b), opts...))
		for _, rt := range adaptertest.BenchRoutes() {
			h := rt.Handler
			r.Handle(rt.Method, adaptertest.ColonPath(rt.Path), func(c *gin.Context) { h(c.Writer, c.Request) })
		}
		b.Run(name, func(b *testing.B) { adaptertest.BenchServe(b, r, "/items/42") })
	}
}
