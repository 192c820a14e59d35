package sluiceecho_test

import (
	"fmt"
	"io"
	"net/http"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/sluicekit/sluice/adapters/adaptertest"
	sluiceecho "github.com/sluicekit/sluice/adapters/echo"
	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/extractors"
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
	if o.NoRateLimitFields {
		opts = append(opts, sluiceecho.WithRateLimitFields(false))
	}
	if o.Auth {
		x, err := extractors.New(extractors.WithContextParam("user", adaptertest.AuthKey))
		if err != nil {
			panic(err)
		}
		opts = append(opts, sluiceecho.WithExtractor(x))
	}
	if o.Cost {
		opts = append(opts, sluiceecho.WithCost(func(c echo.Context) int64 { return adaptertest.Cost(c.Request().Header) }))
	}
	if o.FrameworkClientIP {
		opts = append(opts, sluiceecho.WithFrameworkClientIP())
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
func newEcho(g *core.Guard, o adaptertest.Options, routes []adaptertest.Route) *echo.Echo {
	e := echo.New()
	e.Logger.SetOutput(io.Discard)
	e.IPExtractor = echo.ExtractIPFromXFFHeader() // trusts loopback proxies
	e.Use(recoverer)
	e.Use(func(next echo.HandlerFunc) echo.HandlerFunc { // an authentication middleware
		return func(c echo.Context) error {
			if user := c.Request().Header.Get(adaptertest.AuthHeader); user != "" {
				c.Set(adaptertest.AuthKey, user)
			}
			return next(c)
		}
	})
	e.Use(sluiceecho.Middleware(g, options(o)...))
	for _, rt := range routes {
		h := echo.WrapHandler(rt.Handler)
		e.Add(rt.Method, adaptertest.ColonPath(rt.Path), func(c echo.Context) error {
			if err := h(c); err != nil || o.Fail == nil {
				return err
			}
			if err := o.Fail(c.Request()); err != adaptertest.ErrBadGateway {
				return err
			}
			return echo.NewHTTPError(http.StatusBadGateway)
		})
	}
	return e
}

// TestSuite runs the adapter suite against the echo middleware.
func TestSuite(t *testing.T) {
	adaptertest.Run(t, func(t testing.TB, g *core.Guard, o adaptertest.Options, routes []adaptertest.Route) http.Handler {
		return newEcho(g, o, routes)
	})
}
