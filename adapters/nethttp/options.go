package sluicehttp

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/sluicekit/sluice/adapters/httpadapter"
	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/throttle"
	"github.com/sluicekit/sluice/extractors"
)

// Option configures New, Middleware, Wrap and NewTransport. An invalid
// option (nil, or one given a nil function or Extractor) makes New and
// NewTransport return an error naming it, and Middleware and Wrap panic
// with that error.
type Option interface {
	apply(*config) error
}

type optionFunc func(*config) error

func (f optionFunc) apply(c *config) error { return f(c) }

// common is an option every HTTP adapter has (package httpadapter).
func common(f func(*httpadapter.Common) error) Option {
	return optionFunc(func(c *config) error { return f(&c.Common) })
}

// config is what the options set.
type config struct {
	httpadapter.Common
	resource func(r *http.Request) string
	skip     func(r *http.Request) bool
	block    func(w http.ResponseWriter, r *http.Request, b *core.BlockedError)
	cost     func(r *http.Request) int64
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
	for i, o := range opts {
		if o == nil {
			return c, fmt.Errorf("sluicehttp: %s: option %d is nil", fn, i)
		}
		if err := o.apply(&c); err != nil {
			return c, fmt.Errorf("sluicehttp: %s: %w", fn, err)
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

// serverConfig is newConfig for the server constructors, which refuse
// options for NewTransport.
func serverConfig(fn string, guard *core.Guard, opts []Option) (config, error) {
	c, err := newConfig(fn, guard, opts)
	if err == nil && c.clientOnly != "" {
		err = fmt.Errorf("sluicehttp: %s: %s applies only to NewTransport", fn, c.clientOnly)
	}
	return c, err
}

// WithResource names the resource of each request with fn instead of the
// matched route. fn must return few distinct names (route templates, never
// raw paths or client-chosen values): every name is a resource with its
// own statistics, and the Guard keeps at most core.WithMaxResources of
// them.
func WithResource(fn func(r *http.Request) string) Option {
	return optionFunc(func(c *config) error {
		c.resource = fn
		return httpadapter.CheckFunc("WithResource", fn == nil)
	})
}

// WithExtractor makes the middleware read resource names and param values
// with x, for instance one that trusts your proxies
// (extractors.WithTrustedProxies) or knows the values your authentication
// middleware stores in the request's context (extractors.WithContextParam).
// Declare x once, to the Guard (core.WithParamSource), and the middleware
// finds it there; WithExtractor is then needed only to choose among
// several given to the Guard, and an x other than the Guard's, when it
// has one, is refused (extractors.ForAdapter). Without either, the
// Extractor is extractors.New(): no trusted proxy, so the client IP is
// the socket peer.
func WithExtractor(x *extractors.Extractor) Option {
	return common(httpadapter.WithExtractor(x))
}

// WithCost makes each request take fn(r) permits of the rules that count
// requests, as core.WithCount does (a batch of 20 items, a query's
// complexity), instead of one; a cost below 1 is 1. fn runs before the
// handler (for a Transport, before the request is sent); to read the
// body, buffer it and put it back.
func WithCost(fn func(r *http.Request) int64) Option {
	return optionFunc(func(c *config) error {
		c.cost = fn
		return httpadapter.CheckFunc("WithCost", fn == nil)
	})
}

// WithSkipper makes the middleware pass the requests for which skip
// returns true straight to the handler: they are neither limited nor
// counted. Health checks and metrics endpoints are typical.
func WithSkipper(skip func(r *http.Request) bool) Option {
	return optionFunc(func(c *config) error {
		c.skip = skip
		return httpadapter.CheckFunc("WithSkipper", skip == nil)
	})
}

// WithBlockHandler replaces the whole response to a blocked request: fn
// writes it, given the rule's verdict b. The default is
// DefaultBlockHandler, which fn may call after adding its own touches.
func WithBlockHandler(fn func(w http.ResponseWriter, r *http.Request, b *core.BlockedError)) Option {
	return optionFunc(func(c *config) error {
		c.block, c.serverOnly = fn, "WithBlockHandler"
		return httpadapter.CheckFunc("WithBlockHandler", fn == nil)
	})
}

// WithErrorClassifier sets which outcomes of an admitted request count as
// errors in the Guard's statistics (Entry.Exit with a non-nil error): fn
// gets the response status (200 when the handler wrote nothing) and is
// given a nil error (net/http handlers return none). The default counts
// statuses of 500 and above. A handler that panics always counts as an
// error; fn is not consulted.
func WithErrorClassifier(fn func(status int, err error) bool) Option {
	return common(httpadapter.WithErrorClassifier(fn))
}

// WithRateLimitFields sets whether admitted responses carry the
// RateLimit-Policy and RateLimit fields, as blocked ones do: one member per
// rate rule (flow or hotspot) that admitted the request; a request no rate
// rule applied to gets none. They are on by default; false turns them off.
// The fields are set before the handler runs, which may change them. They
// cost two small allocations per request (the RateLimit field's text and
// the slice of both fields' values); the RateLimit-Policy text is made
// once per rule.
func WithRateLimitFields(on bool) Option {
	f := httpadapter.WithRateLimitFields(on)
	return optionFunc(func(c *config) error {
		c.serverOnly = "WithRateLimitFields"
		return f(&c.Common)
	})
}

// WithThrottle makes a Transport throttle its calls on the client side
// with t (see package throttle): when an upstream answers 429 or 503, or
// not at all (a call its caller cancelled does not count), the Transport
// rejects a share of the calls to it locally, and an upstream's
// Retry-After pauses the calls to it for that long while it rejects most
// of them. The throttle keeps an upstream's calls under the call's
// resource, followed by its URL's port when that is not the scheme's
// default ("GET api.example.com:8443"; with WithResource, its name alone).
// A call the throttle rejects returns a *throttle.Error, which matches
// core.ErrBlocked. For
// NewTransport only; New, Middleware and Wrap refuse it.
func WithThrottle(t *throttle.Throttle) Option {
	return optionFunc(func(c *config) error {
		if t == nil {
			return errors.New("WithThrottle: nil *throttle.Throttle")
		}
		c.throttle, c.clientOnly = t, "WithThrottle"
		return nil
	})
}

// DefaultBlockHandler writes the default response to a blocked request:
// 429 Too Many Requests, or 503 Service Unavailable when a concurrency,
// adaptive or system rule or an open circuit breaker blocked it;
// Retry-After in whole seconds rounded up; the RateLimit-Policy and
// RateLimit fields of draft-ietf-httpapi-ratelimit-headers-11 (not for a
// breaker or a system rule, which are no quota); and an application/problem+json body
// (RFC 9457). The package documentation describes it in full.
func DefaultBlockHandler(w http.ResponseWriter, r *http.Request, b *core.BlockedError) {
	httpadapter.WriteBlocked(w, b)
}
