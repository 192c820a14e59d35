package sluicegin

import (
	"sync"

	"github.com/gin-gonic/gin"

	"github.com/sluicekit/sluice/adapters/httpadapter"
	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/extractors"
)

// Option configures New and Middleware. An invalid option (nil, or one
// given a nil function or Extractor) makes New return an error naming it,
// and Middleware panic with that error.
type Option interface {
	apply(*config) error
}

type optionFunc func(*config) error

func (f optionFunc) apply(c *config) error { return f(c) }

// common is an option every HTTP adapter has (package httpadapter).
func common(f func(*httpadapter.Common) error) Option {
	return optionFunc(func(c *config) error { return f(&c.Common) })
}

// config is what the options set, and the middleware's pool of what it
// hands Enter, which the Guard uses only during Enter: reusing it saves
// its allocation per request.
type config struct {
	httpadapter.Common
	resource func(c *gin.Context) string
	skip     func(c *gin.Context) bool
	block    func(c *gin.Context, b *core.BlockedError)
	cost     func(c *gin.Context) int64
	clientIP bool      // the ip param is c.ClientIP()
	requests sync.Pool // of *request
}

// WithResource names the resource of each request with fn instead of the
// matched route. fn must return few distinct names (route templates, never
// raw paths or client-chosen values): every name is a resource with its
// own statistics, and the Guard keeps at most core.WithMaxResources of
// them.
func WithResource(fn func(c *gin.Context) string) Option {
	return optionFunc(func(c *config) error {
		c.resource = fn
		return httpadapter.CheckFunc("WithResource", fn == nil)
	})
}

// WithExtractor makes the middleware read resource names and param values
// with x, for instance one that trusts your proxies
// (extractors.WithTrustedProxies) or knows the values your authentication
// middleware stores (extractors.WithContextParam, which reads c.Get).
// Declare x once, to the Guard (core.WithParamSource), and the middleware
// finds it there; WithExtractor is then needed only to choose among
// several given to the Guard, and an x other than the Guard's, when it
// has one, is refused (extractors.ForAdapter). Without either, the
// Extractor is extractors.New(): no trusted proxy, so the client IP is
// the socket peer (WithFrameworkClientIP makes it gin's c.ClientIP()).
func WithExtractor(x *extractors.Extractor) Option {
	return common(httpadapter.WithExtractor(x))
}

// WithFrameworkClientIP makes the ip param c.ClientIP(): the client as
// gin's trusted-proxy settings (Engine.SetTrustedProxies,
// Engine.TrustedPlatform) find it, so that proxies are configured once,
// in gin, rather than in the Extractor too. gin trusts every proxy until
// SetTrustedProxies is called (gin.New and gin.Default do not): without it,
// c.ClientIP() believes the X-Forwarded-For and X-Real-IP headers of any
// client. The Extractor's IPv6 prefix (extractors.WithIPv6Prefix) still
// applies.
func WithFrameworkClientIP() Option {
	return optionFunc(func(c *config) error {
		c.clientIP = true
		return nil
	})
}

// WithCost makes each request take fn(c) permits of the rules that count
// requests, as core.WithCount does (a batch of 20 items, a query's
// complexity), instead of one; a cost below 1 is 1. fn runs before the
// request's handlers; to read the body, buffer it and put it back.
func WithCost(fn func(c *gin.Context) int64) Option {
	return optionFunc(func(c *config) error {
		c.cost = fn
		return httpadapter.CheckFunc("WithCost", fn == nil)
	})
}

// WithSkipper makes the middleware pass the requests for which skip
// returns true on to the next handler: they are neither limited nor
// counted. A gin.Skipper can be given as is.
func WithSkipper(skip func(c *gin.Context) bool) Option {
	return optionFunc(func(c *config) error {
		c.skip = skip
		return httpadapter.CheckFunc("WithSkipper", skip == nil)
	})
}

// WithBlockHandler replaces the whole response to a blocked request: fn
// writes it, given the rule's verdict b; the middleware then aborts the
// chain (fn need not call Abort). The default is DefaultBlockHandler, which
// fn may call after adding its own touches.
func WithBlockHandler(fn func(c *gin.Context, b *core.BlockedError)) Option {
	return optionFunc(func(c *config) error {
		c.block = fn
		return httpadapter.CheckFunc("WithBlockHandler", fn == nil)
	})
}

// WithErrorClassifier sets which outcomes of an admitted request count as
// errors in the Guard's statistics (Entry.Exit with a non-nil error): fn
// gets the response status (c.Writer.Status()) and the last error the
// handlers attached to the context (c.Errors.Last(), nil when none). The
// default counts a status of 500 and above, and an attached error unless
// the status is a client error (400 to 499: c.Bind's answer to a malformed
// body). A handler that panics always counts as an error; fn is not
// consulted.
func WithErrorClassifier(fn func(status int, err error) bool) Option {
	return common(httpadapter.WithErrorClassifier(fn))
}

// WithRateLimitFields sets whether admitted responses carry the
// RateLimit-Policy and RateLimit fields, as blocked ones do: one member per
// rate rule (flow or hotspot) that admitted the request; a request no rate
// rule applied to gets none. They are on by default; false turns them off.
// The fields are set before the next handlers run, which may change them.
// See package sluicehttp for what they cost.
func WithRateLimitFields(on bool) Option {
	return common(httpadapter.WithRateLimitFields(on))
}

// DefaultBlockHandler writes the default response to a blocked request,
// the one of the net/http adapter (sluicehttp.DefaultBlockHandler, whose
// package documentation describes it): 429, 503 or 403, Retry-After, the
// RateLimit fields and an application/problem+json body.
func DefaultBlockHandler(c *gin.Context, b *core.BlockedError) {
	httpadapter.WriteBlocked(c.Writer, b)
}
