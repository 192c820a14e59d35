package flow

import (
	"fmt"
	"math/big"
	"slices"
	"time"

	"github.com/sluicekit/sluice/core/internal/rulefields"
	"github.com/sluicekit/sluice/core/internal/window"
	"github.com/sluicekit/sluice/core/ratemath"
)

// Algorithm names a request-rate algorithm. The values are the ones the rules
// file uses.
type Algorithm string

// The algorithms a flow rule may use. Cost and accuracy of each are documented
// in doc.go.
const (
	LeapArray      Algorithm = "leap-array"
	FixedWindow    Algorithm = "fixed-window"
	SlidingLog     Algorithm = "sliding-log"
	SlidingCounter Algorithm = "sliding-counter"
	TokenBucket    Algorithm = "token-bucket"
	LeakyBucket    Algorithm = "leaky-bucket"
)

// StoreAlgorithms returns the algorithms a store.Store supports (those of
// the flow rules with a store), in a new slice.
func StoreAlgorithms() []Algorithm { return []Algorithm{SlidingCounter, TokenBucket, LeakyBucket} }

// Algorithms returns every Algorithm, in the order the documentation gives
// them, in a new slice.
func Algorithms() []Algorithm {
	return []Algorithm{LeapArray, FixedWindow, SlidingLog, SlidingCounter, TokenBucket, LeakyBucket}
}

// Defaults and bounds of Config fields.
const (
	DefaultAlgorithm  = LeapArray
	DefaultWindow     = time.Second
	DefaultBuckets    = 10
	DefaultColdFactor = 3
	MaxBuckets        = window.MaxBuckets
	// MaxSlidingLogLimit bounds Config.Limit for SlidingLog, which keeps one
	// 8-byte timestamp per admitted request in the window.
	MaxSlidingLogLimit = 1 << 20
	// MaxLimit bounds Config.Limit (and Limit+Burst): counts, and a count
	// plus a request's n, stay exact in float64 (the sliding counter's
	// estimate, Lua's numbers in a Redis store).
	MaxLimit = 1 << 52
	// MaxSpan bounds every span of time a limiter adds to now (see the
	// package doc): times stay far from int64's range, and differences of
	// times exact in float64.
	MaxSpan = time.Duration(1 << 52)
	// MaxStoreWindow bounds the Window and MaxWait of a limit kept in a
	// store (store.Limit, a rule with a store): times stay far from
	// int64's range, and differences of times exact in a store's
	// arithmetic (Lua's doubles, for Redis).
	MaxStoreWindow = 30 * 24 * time.Hour
)

// Config describes one flow limit: at most Limit requests per Window, by
// Algorithm. Zero fields take the defaults listed on each field.
type Config struct {
	Algorithm Algorithm     // default DefaultAlgorithm
	Limit     int64         // requests per Window; 0 blocks everything
	Window    time.Duration // default DefaultWindow
	// Buckets is the number of buckets of a LeapArray window; Window must be a
	// multiple of Buckets nanoseconds. Default DefaultBuckets.
	Buckets int
	// Burst is, for TokenBucket, the number of tokens above Limit the bucket
	// can hold.
	Burst int64
	// MaxWait is, for LeakyBucket, the longest a request may wait for its
	// turn; a request whose turn is further away is rejected.
	MaxWait time.Duration
	// Warmup, when positive, makes a rule start cold, at about
	// Limit/ColdFactor, and warm up as its traffic uses a store of tokens
	// (Sentinel's and Guava's warm-up): a full-rate spike from cold reaches
	// Limit after Warmup, slowly at first. Traffic below Limit/ColdFactor, or
	// none, lets the rule cool again: from warm it is cold after
	// 2·Warmup/(ColdFactor+1) of idling. Requests given back (Undo) do not
	// count. The limit in force is updated once per Window (or Warmup/100
	// when that is longer).
	Warmup     time.Duration
	ColdFactor int // default DefaultColdFactor; used with Warmup
}

// FieldError is a problem with one field of a Config.
type FieldError = rulefields.FieldError

// WithDefaults returns c with its zero fields set to their defaults.
func (c Config) WithDefaults() Config {
	if c.Algorithm == "" {
		c.Algorithm = DefaultAlgorithm
	}
	if c.Window == 0 {
		c.Window = DefaultWindow
	}
	if c.Buckets == 0 && c.Algorithm == LeapArray {
		c.Buckets = DefaultBuckets
	}
	if c.ColdFactor == 0 && c.Warmup > 0 {
		c.ColdFactor = DefaultColdFactor
	}
	return c
}

// Validate reports every problem of c (after defaults are applied), one
// FieldError each, or nil when c is valid.
func (c Config) Validate() []*FieldError {
	c = c.WithDefaults()
	var errs []*FieldError
	add := func(field, format string, args ...any) {
		errs = append(errs, &FieldError{Field: field, Msg: fmt.Sprintf(format, args...)})
	}
	if !slices.Contains(Algorithms(), c.Algorithm) {
		add("algorithm", "unknown algorithm %s (want one of %v)", rulefields.Quote(c.Algorithm), Algorithms())
	}
	if c.Limit < 0 {
		add("limit", "must be >= 0, got %d", c.Limit)
	} else if c.Limit > MaxLimit {
		add("limit", "must be <= %d, got %d", MaxLimit, c.Limit)
	}
	if c.Window <= 0 {
		add("window", "must be > 0, got %s", c.Window)
	} else if c.Window > MaxSpan {
		add("window", "must be <= %s (%d ns), got %s", MaxSpan, int64(MaxSpan), c.Window)
	}
	if c.Algorithm == LeapArray {
		switch {
		case c.Buckets < 1 || c.Buckets > MaxBuckets:
			add("buckets", "must be between 1 and %d, got %d", MaxBuckets, c.Buckets)
		case c.Window > 0 && c.Window <= MaxSpan && int64(c.Window)%int64(c.Buckets) != 0:
			add("buckets", "window %s is not a whole number of nanoseconds per bucket with %d buckets: the window must be a multiple of %s", c.Window, c.Buckets, time.Duration(c.Buckets))
		}
	} else if c.Buckets != 0 {
		add("buckets", "only applies to algorithm %s, got %d with %s", LeapArray, c.Buckets, c.Algorithm)
	}
	if c.Burst < 0 {
		add("burst", "must be >= 0, got %d", c.Burst)
	} else if c.Burst > 0 && c.Algorithm != TokenBucket {
		add("burst", "only applies to algorithm %s, got %d with %s", TokenBucket, c.Burst, c.Algorithm)
	}
	if c.MaxWait < 0 {
		add("maxWait", "must be >= 0, got %s", c.MaxWait)
	} else if c.MaxWait > 0 && c.Algorithm != LeakyBucket {
		add("maxWait", "only applies to algorithm %s, got %s with %s", LeakyBucket, c.MaxWait, c.Algorithm)
	}
	if c.Algorithm == SlidingLog && c.Limit > MaxSlidingLogLimit {
		add("limit", "must be <= %d with algorithm %s (one timestamp is kept per request), got %d", MaxSlidingLogLimit, SlidingLog, c.Limit)
	}
	if c.Algorithm == TokenBucket || c.Algorithm == LeakyBucket {
		errs = append(errs, BucketBounds(c.Limit, c.Window, c.Burst, c.MaxWait)...)
	}
	if c.Warmup < 0 {
		add("warmup", "must be >= 0, got %s", c.Warmup)
	}
	if c.ColdFactor < 0 || (c.Warmup > 0 && c.ColdFactor < 1) {
		add("coldFactor", "must be >= 1, got %d", c.ColdFactor)
	} else if c.ColdFactor != 0 && c.Warmup == 0 {
		add("coldFactor", "only applies with warmup > 0")
	}
	return errs
}

// BucketBounds returns the problems of the upper bounds of a token bucket
// (burst) or leaky bucket (maxWait) of limit per window, on the field to
// lower, with the largest value allowed: at most one request per
// nanosecond, Limit+Burst at most MaxLimit, MaxWait and the capacity at
// most MaxSpan. Negative values and a zero window are the caller's.
func BucketBounds(limit int64, window time.Duration, burst int64, maxWait time.Duration) []*FieldError {
	var errs []*FieldError
	add := func(field, format string, args ...any) {
		errs = append(errs, &FieldError{Field: field, Msg: fmt.Sprintf(format, args...)})
	}
	w := int64(window)
	if w > 0 && limit > w {
		add("limit", "must be <= %d (one request per nanosecond) with window %s, got %d", w, window, limit)
	}
	if maxWait > MaxSpan {
		add("maxWait", "must be <= %s (%d ns), got %s", MaxSpan, int64(MaxSpan), maxWait)
	}
	if limit <= 0 || burst <= 0 || w <= 0 || window > MaxSpan || limit > MaxLimit {
		return errs
	}
	// Window + burst*window/limit <= MaxSpan, and limit+burst <= MaxLimit.
	most := min(ratemath.MulDiv(int64(MaxSpan)-w, limit, w), MaxLimit-limit)
	if burst > most {
		add("burst", "must be <= %d with limit %d per %s (a spent bucket must fill within %s, and limit+burst be <= %d), got %d",
			most, limit, window, MaxSpan, int64(MaxLimit), burst)
	}
	return errs
}

// BucketLimitOK reports whether a token or leaky bucket of limit per window
// is honoured by a store, which counts whole nanoseconds per request
// (window/limit rounded up): the rounding loses less than a request per
// window when limit divides the window's nanoseconds or limit*limit <=
// window. largest is the largest limit allowed for window when limit does
// not divide it.
func BucketLimitOK(limit int64, window time.Duration) (largest int64, ok bool) {
	w := int64(window)
	if limit <= 0 || w <= 0 || w%limit == 0 {
		return 0, true
	}
	largest = new(big.Int).Sqrt(big.NewInt(w)).Int64()
	return largest, limit <= largest
}

// BucketLimitProblem says why BucketLimitOK refused limit, after the
// field's name.
func BucketLimitProblem(largest, limit int64, window time.Duration) string {
	return fmt.Sprintf("must be <= %d with a store and a window of %s, or divide the window's %d nanoseconds (a bucket in a store counts whole nanoseconds per request), got %d",
		largest, window, int64(window), limit)
}
