package hotspot

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/sluicekit/sluice/core/internal/flow"
	"github.com/sluicekit/sluice/core/internal/rulefields"
)

// Algorithm names how a hotspot rule limits each value. The values are the
// ones the rules file uses.
type Algorithm string

// The algorithms of a hotspot rule.
const (
	// TokenBucket admits Limit requests per Window per value, refilled
	// continuously, with Burst more tokens of capacity.
	TokenBucket Algorithm = "token-bucket"
	// LeakyBucket paces each value to one request per Window/Limit; a
	// request whose turn lies within MaxWait is admitted with a Wait.
	LeakyBucket Algorithm = "leaky-bucket"
	// Concurrency admits at most Limit requests of each value in flight,
	// each ended by Release.
	Concurrency Algorithm = "concurrency"
)

// valid reports whether a is one of the algorithms.
func (a Algorithm) valid() bool {
	return a == TokenBucket || a == LeakyBucket || a == Concurrency
}

// Defaults and bounds of Config fields.
const (
	// DefaultAlgorithm is the Algorithm when Config.Algorithm is empty.
	DefaultAlgorithm = TokenBucket
	// DefaultWindow is the Window of a bucket when Config.Window is 0.
	DefaultWindow = time.Second
	// DefaultMaxKeys is the number of values a Limiter tracks when
	// Config.MaxKeys is 0.
	DefaultMaxKeys = 100_000
	// MaxMaxKeys bounds Config.MaxKeys: records are indexed by int32.
	MaxMaxKeys = 1 << 30
)

// Config describes one hotspot limit: every value of a request parameter is
// limited separately, by Algorithm. Zero fields take the defaults listed on
// each field.
type Config struct {
	Algorithm Algorithm // default DefaultAlgorithm
	// Limit is requests per Window (TokenBucket, LeakyBucket) or requests
	// in flight (Concurrency) for each value; 0 blocks every value.
	Limit int64
	// Window is the period Limit applies to (TokenBucket, LeakyBucket).
	// Default DefaultWindow.
	Window time.Duration
	// Burst is, for TokenBucket, the number of tokens above a value's limit
	// its bucket can hold (overridden values included).
	Burst int64
	// MaxWait is, for LeakyBucket, the longest a request may wait for its
	// turn; a request whose turn is further away is rejected.
	MaxWait time.Duration
	// MaxKeys bounds the number of values tracked at once. Default
	// DefaultMaxKeys, at most MaxMaxKeys. Values of any length take the
	// same memory: a value is known by a 64-bit keyed hash, never stored.
	// An evicted value that spent half its bucket or more keeps its debt:
	// its limit is never reset by other values; one that spent less gets
	// back at most what it spent (see the package documentation).
	MaxKeys int
	// Overrides gives specific values their own limit instead of Limit; 0
	// blocks the value.
	Overrides map[string]int64
}

// WithDefaults returns c with its zero fields set to their defaults.
func (c Config) WithDefaults() Config {
	if c.Algorithm == "" {
		c.Algorithm = DefaultAlgorithm
	}
	if c.Window == 0 && c.Algorithm != Concurrency {
		c.Window = DefaultWindow
	}
	if c.MaxKeys == 0 {
		c.MaxKeys = DefaultMaxKeys
	}
	return c
}

// Validate reports every problem of c (after defaults are applied), one
// flow.FieldError each named as in the rules file, or nil when c is valid.
func (c Config) Validate() []*flow.FieldError {
	c = c.WithDefaults()
	var errs []*flow.FieldError
	add := func(field, format string, args ...any) {
		errs = append(errs, &flow.FieldError{Field: field, Msg: fmt.Sprintf(format, args...)})
	}
	if !c.Algorithm.valid() {
		add("algorithm", "unknown algorithm %s (want one of %v)", rulefields.Quote(c.Algorithm), []Algorithm{TokenBucket, LeakyBucket, Concurrency})
	}
	buckets := c.Algorithm != Concurrency
	// checkLimit checks a per-value limit: a bucket needs at least one
	// nanosecond per request.
	checkLimit := func(field, what string, v int64) {
		switch {
		case v < 0:
			add(field, "%smust be >= 0, got %d", what, v)
		case buckets && c.Window > 0 && v > int64(c.Window):
			add(field, "%smust be <= %d (one request per nanosecond) with window %s, got %d", what, int64(c.Window), c.Window, v)
		}
	}
	checkLimit("limit", "", c.Limit)
	switch {
	case buckets && c.Window <= 0:
		add("window", "must be > 0, got %s", c.Window)
	case !buckets && c.Window != 0:
		add("window", "does not apply to algorithm %s, got %s", Concurrency, c.Window)
	}
	switch {
	case c.Burst < 0:
		add("burst", "must be >= 0, got %d", c.Burst)
	case c.Burst > 0 && c.Algorithm != TokenBucket:
		add("burst", "only applies to algorithm %s, got %d with %s", TokenBucket, c.Burst, c.Algorithm)
	}
	switch {
	case c.MaxWait < 0:
		add("maxWait", "must be >= 0, got %s", c.MaxWait)
	case c.MaxWait > 0 && c.Algorithm != LeakyBucket:
		add("maxWait", "only applies to algorithm %s, got %s with %s", LeakyBucket, c.MaxWait, c.Algorithm)
	}
	switch {
	case c.MaxKeys < 0:
		add("maxKeys", "must be >= 0, got %d", c.MaxKeys)
	case c.MaxKeys > MaxMaxKeys:
		add("maxKeys", "must be <= %d, got %d", MaxMaxKeys, c.MaxKeys)
	}
	for _, k := range slices.Sorted(maps.Keys(c.Overrides)) {
		checkLimit("overrides", "value for "+rulefields.Quote(k)+" ", c.Overrides[k])
	}
	return errs
}

// Bounds reports the problems of the upper bounds of c's buckets (after
// defaults are applied), which Validate leaves out: Window at most
// flow.MaxSpan, then flow.BucketBounds (Burst, MaxWait) for Limit and each
// override, each field once, with the bound of the lowest limit, which
// allows the least. Within them every bucket is exact (see the package
// documentation). It is nil for Concurrency and for a Config whose window
// or limit Validate refuses. New refuses a Config with such problems.
func (c Config) Bounds() []*flow.FieldError {
	c = c.WithDefaults()
	if c.Algorithm == Concurrency || c.Window <= 0 || c.Limit < 0 {
		return nil
	}
	if c.Window > flow.MaxSpan {
		return []*flow.FieldError{{Field: "window", Msg: fmt.Sprintf("must be <= %s (%d ns), got %s", flow.MaxSpan, int64(flow.MaxSpan), c.Window)}}
	}
	limits := append([]int64{c.Limit}, slices.Collect(maps.Values(c.Overrides))...)
	slices.Sort(limits)
	var errs []*flow.FieldError
	seen := map[string]bool{"limit": true} // Validate checks limits
	for _, lim := range limits {
		for _, fe := range flow.BucketBounds(lim, c.Window, c.Burst, c.MaxWait) {
			if !seen[fe.Field] {
				seen[fe.Field] = true
				errs = append(errs, fe)
			}
		}
	}
	return errs
}
