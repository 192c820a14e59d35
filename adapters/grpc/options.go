package sluicegrpc

import (
	"context"
	"errors"
	"fmt"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/throttle"
	"github.com/sluicekit/sluice/extractors"
)

// Option configures the interceptors made by New and the four interceptor
// constructors. Options are validated at construction: an invalid one (a nil
// function or extractor) makes New return an error naming it, and the
// constructors panic with that error.
type Option interface {
	apply(*config) error
}

type optionFunc func(*config) error

func (f optionFunc) apply(c *config) error { return f(c) }

// config is what the options set; it is read-only once New returns.
type config struct {
	resource  func(ctx context.Context, fullMethod string) string
	extractor *extractors.Extractor
	skip      func(ctx context.Context, fullMethod string) bool
	onBlock   func(ctx context.Context, fullMethod string, b *core.BlockedError) error
	isFailure func(ctx context.Context, fullMethod string, err error) bool
	cost      func(ctx context.Context, fullMethod string, req any) int64
	throttle  *throttle.Throttle
}

// WithResource makes the interceptors name the resource of a call with fn
// instead of using its full method ("/pkg.Service/Method"), for example to
// group methods or to add a tenant. fn runs on every call that is not skipped.
// Its results should come from a small set: every distinct name gets
// statistics (bounded by core.WithMaxResources, beyond which names share the
// core.OverflowResource statistics) and is matched against the rules.
func WithResource(fn func(ctx context.Context, fullMethod string) string) Option {
	return optionFunc(func(c *config) error {
		if fn == nil {
			return errors.New("sluicegrpc: WithResource: nil function")
		}
		c.resource = fn
		return nil
	})
}

// WithExtractor makes the interceptors read the params hotspot rules limit by
// ("metadata:NAME", "peer", "ip", "method" and custom params) through x, for
// example an Extractor that trusts the proxies in front of the service
// (extractors.WithTrustedProxies) or knows custom params
// (extractors.WithGRPCParam). Declare x once, to the Guard
// (core.WithParamSource), and the interceptors find it there; WithExtractor
// is then needed only to choose among several given to the Guard, and an x
// other than the Guard's, when it has one, is refused
// (extractors.ForAdapter). Without either, the Extractor is
// extractors.New(): it trusts no proxy, so "ip" is the socket peer.
func WithExtractor(x *extractors.Extractor) Option {
	return optionFunc(func(c *config) error {
		if x == nil {
			return errors.New("sluicegrpc: WithExtractor: nil *extractors.Extractor")
		}
		c.extractor = (*extractors.Extractor)(x)
		return nil
	})
}

// WithSkipper makes the interceptors pass the calls for which skip returns
// true straight to the handler (or, for client interceptors, the server),
// without entering the Guard: they are neither limited nor counted. skip
// runs first on every call; ctx is the call's context (incoming metadata on
// servers, outgoing on clients). Use it for health checks and reflection:
//
//	sluicegrpc.WithSkipper(func(_ context.Context, m string) bool {
//		return strings.HasPrefix(m, "/grpc.health.v1.Health/")
//	})
func WithSkipper(skip func(ctx context.Context, fullMethod string) bool) Option {
	return optionFunc(func(c *config) error {
		if skip == nil {
			return errors.New("sluicegrpc: WithSkipper: nil function")
		}
		c.skip = skip
		return nil
	})
}

// WithCost makes each call take fn's result in permits of the rules that
// count calls, as core.WithCount does (a batch of 20 items, a query's
// complexity), instead of one; a cost below 1 is 1. req is the request
// message of a unary call, and nil for a stream, whose messages come
// later. fn runs before the handler (on clients, before the call is sent).
func WithCost(fn func(ctx context.Context, fullMethod string, req any) int64) Option {
	return optionFunc(func(c *config) error {
		if fn == nil {
			return errors.New("sluicegrpc: WithCost: nil function")
		}
		c.cost = fn
		return nil
	})
}

// WithBlockHandler makes the interceptors return the error fn returns when a
// rule blocks a call, instead of the default, BlockedStatus(b).Err(). A nil
// error from fn means the default error: a blocked call never reaches the
// handler. fn may build on BlockedStatus. The grpc-retry-pushback-ms trailer
// is set whatever fn returns (see the package documentation).
func WithBlockHandler(fn func(ctx context.Context, fullMethod string, b *core.BlockedError) error) Option {
	return optionFunc(func(c *config) error {
		if fn == nil {
			return errors.New("sluicegrpc: WithBlockHandler: nil function")
		}
		c.onBlock = fn
		return nil
	})
}

// WithErrorClassifier makes the interceptors ask fn whether a call that
// returned the non-nil error err failed, for the Guard's error statistics
// (core.ResourceStats.Error, and the breaker rules that will read them).
// A nil error is always a success. The default counts only the codes of a
// server fault (see "Entries and outcomes" in the package docs). A handler
// that panics always counts as failed.
func WithErrorClassifier(fn func(ctx context.Context, fullMethod string, err error) bool) Option {
	return optionFunc(func(c *config) error {
		if fn == nil {
			return errors.New("sluicegrpc: WithErrorClassifier: nil function")
		}
		c.isFailure = fn
		return nil
	})
}

// WithThrottle makes the client interceptors throttle outgoing calls on the
// client side with t (see package throttle): when the server answers
// ResourceExhausted or Unavailable, or nothing before the call's deadline
// (a call its caller cancelled does not count), they reject a share of
// the calls to the same resource locally, and a server's retry time
// (RetryInfo, or the pushback trailer of a unary call) pauses those calls
// for that long while it rejects most of them. A call the throttle rejects returns status Unavailable,
// with a RetryInfo while paused, without reaching the server. Server
// interceptors do not use it.
func WithThrottle(t *throttle.Throttle) Option {
	return optionFunc(func(c *config) error {
		if t == nil {
			return errors.New("sluicegrpc: WithThrottle: nil *throttle.Throttle")
		}
		c.throttle = t
		return nil
	})
}

func newConfig(g *core.Guard, opts []Option) (*config, error) {
	c := &config{}
	for i, o := range opts {
		if o == nil {
			return nil, fmt.Errorf("sluicegrpc: option %d is nil", i)
		}
		if err := o.apply(c); err != nil {
			return nil, err
		}
	}
	x, err := extractors.ForAdapter(g, c.extractor)
	if err != nil {
		return nil, fmt.Errorf("sluicegrpc: %w", err)
	}
	c.extractor = x
	if c.isFailure == nil {
		c.isFailure = defaultIsFailure
	}
	if err := g.AddParamSource(c.extractor.GRPCSource()); err != nil {
		return nil, fmt.Errorf("sluicegrpc: %w", err)
	}
	return c, nil
}
