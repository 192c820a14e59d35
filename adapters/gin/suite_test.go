package sluicegin_test

import (
	"io"
	"net/http"
	"os"
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/sluicekit/sluice/adapters/adaptertest"
	sluicegin "github.com/sluicekit/sluice/adapters/gin"
	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/extractors"
)

func TestMain(m *testing.M) {
	gin.SetMode(gin.TestMode)
	os.Exit(m.Run())
}

// options translates the suite's options into the adapter's.
func options(o adaptertest.Options) []sluicegin.Option {
	var opts []sluicegin.Option
	if o.Extractor != nil {
		opts = append(opts, sluicegin.WithExtractor(o.Extractor))
	}
	if o.SkipPath != "" {
		// A gin.Skipper, as gin's own middleware takes.
		var skip gin.Skipper = func(c *gin.Context) bool { return c.Request.URL.Path == o.SkipPath }
		opts = append(opts, sluicegin.WithSkipper(skip))
	}
	if o.Classifier != nil {
		opts = append(opts, sluicegin.WithErrorClassifier(o.Classifier))
	}
	if o.NoRateLimitFields {
		opts = append(opts, sluicegin.WithRateLimitFields(false))
	}
	if o.Auth {
		x, err := extractors.New(extractors.WithContextParam("user", adaptertest.AuthKey))
		if err != nil {
			panic(err)
		}
		opts = append(opts, sluicegin.WithExtractor(x))
	}
	if o.Cost {
		opts = append(opts, sluicegin.WithCost(func(c *gin.Context) int64 { return adaptertest.Cost(c.Request.Header) }))
	}
	if o.FrameworkClientIP {
		opts = append(opts, sluicegin.WithFrameworkClientIP())
	}
	if o.BlockStatus != 0 {
		opts = append(opts, sluicegin.WithBlockHandler(func(c *gin.Context, b *core.BlockedError) {
			c.Header("X-Blocked-By", b.Rule)
			c.Status(o.BlockStatus)
		}))
	}
	return opts
}

// newEngine returns a gin engine serving routes through guard, with gin's
// recovery before the middleware.
func newEngine(g *core.Guard, o adaptertest.Options, routes []adaptertest.Route) *gin.Engine {
	r := gin.New()
	if err := r.SetTrustedProxies([]string{"127.0.0.1"}); err != nil {
		panic(err)
	}
	r.Use(gin.CustomRecoveryWithWriter(io.Discard, func(c *gin.Context, _ any) {
		c.AbortWithStatus(http.StatusInternalServerError)
	}))
	r.Use(func(c *gin.Context) { // an authentication middleware
		if user := c.GetHeader(adaptertest.AuthHeader); user != "" {
			c.Set(adaptertest.AuthKey, user)
		}
	})
	r.Use(sluicegin.Middleware(g, options(o)...))
	for _, rt := range routes {
		h := gin.WrapF(rt.Handler)
		r.Handle(rt.Method, adaptertest.ColonPath(rt.Path), func(c *gin.Context) {
			h(c)
			if o.Fail == nil {
				return
			}
			if err := o.Fail(c.Request); err != nil {
				_ = c.AbortWithError(http.StatusBadGateway, err)
			}
		})
	}
	return r
}

// TestSuite runs the adapter suite against the gin middleware.
func TestSuite(t *testing.T) {
	adaptertest.Run(t, func(t testing.TB, g *core.Guard, o adaptertest.Options, routes []adaptertest.Route) http.Handler {
		return newEngine(g, o, routes)
	})
}
