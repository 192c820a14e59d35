package sluiceenvoy

import (
	"errors"
	"fmt"
	"reflect"

	"github.com/sluicekit/sluice/core"
)

// Option configures a Server. Options are validated by New, which returns
// an error naming an invalid one.
type Option interface {
	apply(*options) error
}

type optionFunc func(*options) error

func (f optionFunc) apply(o *options) error { return f(o) }

// defaultMaxOverrides is the number of distinct limits descriptors' limit
// overrides may ask for, when no WithMaxOverrides is given.
const defaultMaxOverrides = 64

// defaultMaxDescriptors is the number of descriptors a request may have,
// when no WithMaxDescriptors is given.
const defaultMaxDescriptors = 64

type options struct {
	defaults       core.Rule
	xHeaders       bool
	noHeaders      bool
	unknownOK      bool
	maxOverrides   int
	maxDescriptors int
}

// WithRuleDefaults makes the rules of the limits of the envoyproxy/ratelimit
// config (and of descriptors' limit overrides) start from r: its Algorithm,
// Buckets, Burst, MaxKeys, Store, Mode, OnFailure and LocalLimit apply to
// each (a limit's `sluice: {algorithm: ...}` overrides the algorithm); the
// other fields must be zero. Without it, limits of descriptors with fixed
// values are flow rules with the leap-array algorithm (a sliding window of 10
// buckets), and limits of descriptors whose values vary are hotspot rules
// with the token-bucket algorithm; both take their counts from the Guard's
// memory. With a Store, flow rules use the store's sliding counter by
// default and hotspot rules its token bucket (core.Rule.Store).
func WithRuleDefaults(r core.Rule) Option {
	return optionFunc(func(o *options) error {
		keep := core.Rule{Algorithm: r.Algorithm, Buckets: r.Buckets, Burst: r.Burst, MaxKeys: r.MaxKeys,
			Store: r.Store, Mode: r.Mode, OnFailure: r.OnFailure, LocalLimit: r.LocalLimit}
		if !reflect.DeepEqual(keep, r) {
			return errors.New("sluiceenvoy: WithRuleDefaults: only algorithm, buckets, burst, maxKeys, store, mode, onFailure and localLimit may be set")
		}
		o.defaults = keep
		return nil
	})
}

// WithXRateLimitHeaders makes the Server also add the X-RateLimit-Limit,
// X-RateLimit-Remaining and X-RateLimit-Reset headers of
// draft-polli-ratelimit-headers-03, as Envoy's own filter writes them
// (enable_x_ratelimit_headers: DRAFT_VERSION_03), for the descriptor closest
// to its limit.
func WithXRateLimitHeaders() Option {
	return optionFunc(func(o *options) error { o.xHeaders = true; return nil })
}

// WithoutRateLimitHeaders makes the Server add no RateLimit-Policy and
// RateLimit fields to responses.
func WithoutRateLimitHeaders() Option {
	return optionFunc(func(o *options) error { o.noHeaders = true; return nil })
}

// WithUnknownDomainOK makes the Server answer OK, with an OK status per
// descriptor, to a request of a domain no config has, as the reference
// server does, instead of the gRPC error NotFound.
func WithUnknownDomainOK() Option {
	return optionFunc(func(o *options) error { o.unknownOK = true; return nil })
}

// WithMaxOverrides bounds the number of distinct limits that descriptors'
// limit overrides may ask for (default 64): each is a rule of the Guard,
// added at its first request; a request asking for one more is OVER_LIMIT,
// none of its descriptors decided, unless the Guard makes every rule a
// shadow rule (see the package documentation).
func WithMaxOverrides(n int) Option {
	return optionFunc(func(o *options) error {
		if n < 0 {
			return fmt.Errorf("sluiceenvoy: WithMaxOverrides: n must be >= 0, got %d", n)
		}
		o.maxOverrides = n
		return nil
	})
}

// WithMaxDescriptors bounds the number of descriptors of a request (default
// 64; Envoy sends one per rate_limits entry of a route that produces one, a
// few in practice). A request with more is OVER_LIMIT, none of its
// descriptors decided, unless only shadow limits could limit it (see the
// package documentation). Each descriptor is
// a decision, and a resource of the Guard when a rule matches it: without
// a bound one request of 20,000 descriptors took 92 ms.
func WithMaxDescriptors(n int) Option {
	return optionFunc(func(o *options) error {
		if n < 1 {
			return fmt.Errorf("sluiceenvoy: WithMaxDescriptors: n must be >= 1, got %d", n)
		}
		o.maxDescriptors = n
		return nil
	})
}
