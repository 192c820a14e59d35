package sluiceecho_test

import (
	"fmt"
	"io"
	"net/http"
	"testing"

	"github.com/labstack/echo/v4"

	sluiceecho "github.com/sluicekit/sluice/adapters/echo"
	"github.com/sluicekit/sluice/adapters/internal/adaptertest"
	"github.com/sluicekit/sluice/core"
)

// skipper has the type of echo's middleware.Skipper (a named
// func(echo.Context) bool), which WithSkipper takes as is.
type skipper func(c echo.Context) bool

// options translates the suite's options into the adapter's.
func options(o adaptertest.Options) []sluiceecho.Option {
	var opts []sluiceecho.Option
	if o.Extractor != nil {
		opts = append(opts, sluiceecho.WithExtractor(o.Extractor))
	}
	if o.SkipPath != "" {
		var skip skipper = func(c echo.Context) bool { return c.Request().URL.Path == o.SkipPath }
		opts = append(opts, sluiceecho.WithSkipper(skip))
	}
	if o.Classifier != nil {
		opts = append(opts, sluiceecho.WithErrorClassifier(o.Classifier))
	}
	if o.RateLimitFields {
		opts = append(opts, sluiceecho.WithRateLimitFields())
	}
	if o.BlockStatus != 0 {
		opts = append(opts, sluiceecho.WithBlockHandler(func(c echo.Context, b *core.BlockedError) error {
			c.Response().Header().Set("X-Blocked-By", b.Rule)
			return c.NoContent(o.BlockStatus)
		}))
	}
	return opts
}

// recoverer turns a panic into an error for echo's error handler (500), as
// echo's middleware.Recover does.
func recoverer(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) (err error) {
		defer func() {
			if p := recover(); p != nil {
				err = fmt.Errorf("panic: %v", p)
			}
		}()
		return next(c)
	}
}

// newEcho returns an Echo serving routes through guard, with a recovery
// middleware before the adapter.
func newEcho(g *core.Guard, opts []sluiceecho.Option, routes []adaptertest.Route) *echo.Echo {
	e := echo.New()
	e.Logger.SetOutput(io.Discard)
	e.Use(recoverer)
	e.Use(sluiceecho.New(g, opts...))
	for _, rt := range routes {
		e.Add(rt.Method, adaptertest.ColonPath(rt.Path), echo.WrapHandler(rt.Handler))
	}
	return e
}

// TestSuite runs the adapter suite against the echo middleware.
func TestSuite(t *testing.T) {
	adaptertest.Run(t, func(t testing.TB, g *core.Guard, o adaptertest.Options, routes []adaptertest.Route) http.Handler {
		return newEcho(g, options(o), routes)
	})
}
