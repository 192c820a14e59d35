package sluicehttp

import (
	"fmt"
	"net/http"

	"github.com/sluicekit/sluice/adapters/internal/httpadapter"
	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/throttle"
	"github.com/sluicekit/sluice/extractors"
)

// Option configures Middleware, Wrap and NewTransport. Options that take a function or
// an Extractor panic when it is nil, naming the option, so that a mistake
// shows at construction.
type Option interface {
	apply(*config)
}

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

// config is what the options set.
type config struct {
	httpadapter.Common
	resource func(r *http.Request) string
	skip     func(r *http.Request) bool
	block    func(w http.ResponseWriter, r *http.Request, b *core.BlockedError)
	// serverOnly names an option given that only a server applies, which
	// NewTransport refuses; clientOnly one that only NewTransport applies.
	serverOnly, clientOnly string
	throttle               *throttle.Throttle
}

// newConfig applies opts for fn, which panics with the error unless it
// returns it.
func newConfig(fn string, guard *core.Guard, opts []Option) (config, error) {
	var c config
	c.Init("sluicehttp: "+fn, guard)
	for _, o := range opts {
		if o != nil {
			o.apply(&c)
		}
	}
	if c.block == nil {
		c.block = DefaultBlockHandler
	}
	if err := c.FinishErr(); err != nil {
		return c, fmt.Errorf("sluicehttp: %s: %w", fn, err)
	}
	return c, nil
}

// mustConfig is newConfig for the constructors that panic.
func mustConfig(fn string, guard *core.Guard, opts []Option) config {
	c, err := newConfig(fn, guard, opts)
	if err == nil && c.clientOnly != "" {
		err = fmt.Errorf("sluicehttp: %s: %s applies only to NewTransport", fn, c.clientOnly)
	}
	if err != nil {
		panic(err.Error())
	}
	return c
}

func mustFunc(option string, isNil bool) {
	if isNil {
		panic("sluicehttp: " + option + ": nil function")
	}
}

// WithResource names the resource of each request with fn instead of the
// matched route. fn must return few distinct names (route templates, never
// raw paths or client-chosen values): every name is a resource with its
// own statistics, and the Guard keeps at most core.WithMaxResources of
// them.
func WithResource(fn func(r *http.Request) string) Option {
	mustFunc("WithResource", fn == nil)
	return optionFunc(func(c *config) { c.resource = fn })
}

// WithExtractor makes the middleware read resource names and param values
// with x, for instance one that trusts your proxies
// (extractors.WithTrustedProxies). The default is extractors.New(): no
// trusted proxy, so the client IP is the socket peer.
func WithExtractor(x *extractors.Extractor) Option {
	if x == nil {
		panic("sluicehttp: WithExtractor: nil *extractors.Extractor")
	}
	return optionFunc(func(c *config) { c.Extractor = x })
}

// WithSkipper makes the middleware pass the requests for which skip
// returns true straight to the handler: they are neither limited nor
// counted. Health checks and metrics endpoints are typical.
func WithSkipper(skip func(r *http.Request) bool) Option {
	mustFunc("WithSkipper", skip == nil)
	return optionFunc(func(c *config) { c.skip = skip })
}

// WithBlockHandler replaces the whole response to a blocked request: fn
// writes it, given the rule's verdict b. The default is
// DefaultBlockHandler, which fn may call after adding its own touches.
func WithBlockHandler(fn func(w http.ResponseWriter, r *http.Request, b *core.BlockedError)) Option {
	mustFunc("WithBlockHandler", fn == nil)
	return optionFunc(func(c *config) { c.block, c.serverOnly = fn, "WithBlockHandler" })
}

// WithErrorClassifier sets which outcomes of an admitted request count as
// errors in the Guard's statistics (Entry.Exit with a non-nil error): fn
// gets the response status (200 when the handler wrote nothing) and is
// given a nil error (net/http handlers return none). The default counts
// statuses of 500 and above. A handler that panics always counts as an
// error; fn is not consulted.
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
// handler runs, which may change them. This costs a few small allocations
// per request, which the pass path otherwise does not make.
func WithRateLimitFields() Option {
	return optionFunc(func(c *config) { c.Quota, c.serverOnly = true, "WithRateLimitFields" })
}

// WithThrottle makes a Transport throttle its calls on the client side
// with t (see package throttle): when an upstream answers 429 or 503, or
// not at all, the Transport rejects a share of the calls to it locally,
// and an upstream's Retry-After pauses the calls to it for that long. A
// call the throttle rejects returns a *throttle.Error, which matches
// core.ErrBlocked. For NewTransport only; Middleware and Wrap panic with it.
func WithThrottle(t *throttle.Throttle) Option {
	if t == nil {
		panic("sluicehttp: WithThrottle: nil *throttle.Throttle")
	}
	return optionFunc(func(c *config) { c.throttle, c.clientOnly = t, "WithThrottle" })
}

// DefaultBlockHandler writes the default response to a blocked request:
// 429 Too Many Requests, or 503 Service Unavailable when a concurrency rule
// (core.KindConcurrency) or an open circuit breaker (core.KindBreaker)
// blocked it; Retry-After in whole seconds rounded up; the RateLimit-Policy
// and RateLimit fields of draft-ietf-httpapi-ratelimit-headers-11 (not for
// a breaker, which is no quota); and an application/problem+json body
// (RFC 9457). The package documentation describes it in full.
func DefaultBlockHandler(w http.ResponseWriter, r *http.Request, b *core.BlockedError) {
	httpadapter.WriteBlocked(w, b)
}
