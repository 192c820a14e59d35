package sluiceecho

import (
	"github.com/labstack/echo/v4"

	"github.com/sluicekit/sluice/adapters/internal/httpadapter"
	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/extractors"
)

// Option configures New. Options that take a function or an Extractor
// panic when it is nil, naming the option, so that a mistake shows at
// construction.
type Option interface {
	apply(*config)
}

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

// config is what the options set.
type config struct {
	httpadapter.Common
	resource func(c echo.Context) string
	skip     func(c echo.Context) bool
	block    func(c echo.Context, b *core.BlockedError) error
}

func mustFunc(option string, isNil bool) {
	if isNil {
		panic("sluiceecho: " + option + ": nil function")
	}
}

// WithResource names the resource of each request with fn instead of the
// matched route. fn must return few distinct names (route templates, never
// raw paths or client-chosen values): every name is a resource with its
// own statistics, and the Guard keeps at most core.WithMaxResources of
// them.
func WithResource(fn func(c echo.Context) string) Option {
	mustFunc("WithResource", fn == nil)
	return optionFunc(func(c *config) { c.resource = fn })
}

// WithExtractor makes the middleware read resource names and param values
// with x, for instance one that trusts your proxies
// (extractors.WithTrustedProxies). The default is extractors.New(): no
// trusted proxy, so the client IP is the socket peer. The middleware
// never uses echo's RealIP, whose trust settings are the Echo's.
func WithExtractor(x *extractors.Extractor) Option {
	if x == nil {
		panic("sluiceecho: WithExtractor: nil *extractors.Extractor")
	}
	return optionFunc(func(c *config) { c.Extractor = x })
}

// WithSkipper makes the middleware pass the requests for which skip
// returns true on to the next handler, neither limited nor counted, as
// the Skipper of echo's own middleware configs does: a middleware.Skipper
// can be given as is.
func WithSkipper(skip func(c echo.Context) bool) Option {
	mustFunc("WithSkipper", skip == nil)
	return optionFunc(func(c *config) { c.skip = skip })
}

// WithBlockHandler replaces the whole response to a blocked request: fn
// writes it, given the rule's verdict b, and the error it returns goes to
// echo's HTTPErrorHandler, as a handler's would. The default is
// DefaultBlockHandler, which fn may call after adding its own touches.
func WithBlockHandler(fn func(c echo.Context, b *core.BlockedError) error) Option {
	mustFunc("WithBlockHandler", fn == nil)
	return optionFunc(func(c *config) { c.block = fn })
}

// WithErrorClassifier sets which outcomes of an admitted request count as
// errors in the Guard's statistics (Entry.Exit with a non-nil error): fn
// gets the response status and the error the next handler returned. The
// status is the one written when the response is committed; otherwise the
// one echo's error handler will give err (an *echo.HTTPError's Code, else
// 500), or 200. The default counts a status of 500 and above, and any
// returned error except an *echo.HTTPError below 500, which is how echo
// handlers answer 404 or 400 and no failure of the server. A handler that
// panics always counts as an error; fn is not consulted.
func WithErrorClassifier(fn func(status int, err error) bool) Option {
	mustFunc("WithErrorClassifier", fn == nil)
	return optionFunc(func(c *config) { c.Classify = fn })
}

// WithRateLimitFields makes admitted responses carry the RateLimit-Policy
// and RateLimit fields too, describing the rate rule (flow or hotspot) the
// request left the least quota of; a request no rate rule applied to gets
// none. (Responses blocked by a rate or concurrency limit always carry
// them; those an open circuit breaker blocked never do, with or without
// this option: a breaker is no quota.) The fields are set before the
// next handler runs, which may change them. This costs a few small
// allocations per request, which the pass path otherwise does not make.
func WithRateLimitFields() Option {
	return optionFunc(func(c *config) { c.Quota = true })
}

// DefaultBlockHandler writes the default response to a blocked request and
// returns nil: 429 Too Many Requests, or 503 Service Unavailable when a
// concurrency rule (core.KindConcurrency) or an open circuit breaker
// (core.KindBreaker) blocked it; Retry-After in whole seconds rounded up;
// the RateLimit-Policy and RateLimit fields of
// draft-ietf-httpapi-ratelimit-headers-11 (not for a breaker, which is no
// quota); and an application/problem+json body (RFC 9457). It is the
// response of the net/http adapter, sluicehttp.DefaultBlockHandler, whose
// package documentation describes it in full.
func DefaultBlockHandler(c echo.Context, b *core.BlockedError) error {
	httpadapter.WriteBlocked(c.Response(), b)
	return nil
}
