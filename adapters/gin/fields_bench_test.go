package sluicegin_test

import (
	"net/http"
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/sluicekit/sluice/adapters/adaptertest"
	sluicegin "github.com/sluicekit/sluice/adapters/gin"
)

// BenchmarkRateLimitFields measures the middleware on a route with a path
// parameter under adaptertest.BenchGuard's two rate rules, with the
// RateLimit fields on admitted responses ("on", the default) and without
// them ("off"), each on its own, then both in alternating batches
// ("pair", adaptertest.BenchPair: "added-ns/op" is what the fields add):
//
//	go test -run '^$' -bench RateLimitFields -benchmem .
func BenchmarkRateLimitFields(b *testing.B) {
	var hs [2]http.Handler
	for i, name := range []string{"on", "off"} {
		r := gin.New()
		var opts []sluicegin.Option
		if name == "off" {
			opts = append(opts, sluicegin.WithRateLimitFields(false))
		}
		r.Use(sluicegin.Middleware(adaptertest.BenchGuard(b), opts...))
		for _, rt := range adaptertest.BenchRoutes() {
			h := rt.Handler
			r.Handle(rt.Method, adaptertest.ColonPath(rt.Path), func(c *gin.Context) { h(c.Writer, c.Request) })
		}
		hs[i] = r
		b.Run(name, func(b *testing.B) { adaptertest.BenchServe(b, hs[i], "/items/42") })
	}
	b.Run("pair", func(b *testing.B) { adaptertest.BenchPair(b, hs[0], hs[1], "/items/42") })
}
