package sluiceecho_test

import (
	"testing"

	"github.com/labstack/echo/v4"

	sluiceecho "github.com/sluicekit/sluice/adapters/echo"
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
		e := echo.New()
		var opts []sluiceecho.Option
		name := "on"
		if off {
			opts, name = append(opts, sluiceecho.WithRateLimitFields(false)), "off"
		}
		e.Use(sluiceecho.Middleware(adaptertest.BenchGuard(b), opts...))
		for _, rt := range adaptertest.BenchRoutes() {
			h := rt.Handler
			e.Add(rt.Method, adaptertest.ColonPath(rt.Path), func(c echo.Context) error { h(c.Response(), c.Request()); return nil })
		}
		b.Run(name, func(b *testing.B) { adaptertest.BenchServe(b, e, "/items/42") })
	}
}
