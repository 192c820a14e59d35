package redisstore

import (
	"fmt"
	"strings"
	"time"
)

// Defaults of the options.
const (
	defaultTimeout    = 50 * time.Millisecond
	defaultPrefix     = "sluice"
	defaultIdleExpiry = time.Second
	defaultBatchSize  = 128
	defaultSyncPeriod = 100 * time.Millisecond
	defaultMaxKeys    = 100000
	defaultMaxLag     = time.Second
)

// The sync age after which approximate limits fail (see WithSyncPeriod):
// syncAgePeriods sync periods, and at least minSyncAge.
const (
	syncAgePeriods = 10
	minSyncAge     = time.Second
)

// Bounds of the options.
const (
	maxPrefixLen  = 128
	maxBatchSize  = 10000
	minSyncPeriod = time.Millisecond
	maxSyncPeriod = time.Minute
	maxMaxLag     = time.Minute
)

// An Option configures a Store made by New.
type Option interface {
	apply(*options) error
}

type optionFunc func(*options) error

func (f optionFunc) apply(o *options) error { return f(o) }

type options struct {
	prefix     string
	timeout    time.Duration
	idle       time.Duration
	batch      int
	syncPeriod time.Duration
	maxKeys    int
	maxLag     time.Duration
	maxSyncAge time.Duration // set by New from syncPeriod
}

func defaultOptions() options {
	return options{
		prefix:     defaultPrefix,
		timeout:    defaultTimeout,
		idle:       defaultIdleExpiry,
		batch:      defaultBatchSize,
		syncPeriod: defaultSyncPeriod,
		maxKeys:    defaultMaxKeys,
		maxLag:     defaultMaxLag,
	}
}

// WithPrefix sets the prefix of every Redis key the Store writes (default
// "sluice"): keys are PREFIX:{KEY}:SUFFIX. The prefix must be 1 to
// 128 bytes without '{' or '}' (they would move the hash tag).
func WithPrefix(p string) Option {
	return optionFunc(func(o *options) error {
		switch {
		case p == "" || len(p) > maxPrefixLen:
			return fmt.Errorf("redisstore.WithPrefix: must be 1 to %d bytes, got %d bytes (%q)", maxPrefixLen, len(p), p)
		case strings.ContainsAny(p, "{}"):
			return fmt.Errorf("redisstore.WithPrefix: must not contain '{' or '}', got %q", p)
		}
		o.prefix = p
		return nil
	})
}

// WithTimeout sets how long one call of the Store may take (default
// 50ms): a Take or Undo that has no answer from Redis by then
// returns an error wrapping store.ErrUnavailable. It also bounds each
// pipeline of the approximate mode's sync. While the process runs late
// (a busy host), calls wait longer, up to the timeout plus WithMaxLag.
func WithTimeout(d time.Duration) Option {
	return optionFunc(func(o *options) error {
		if d <= 0 || d > time.Minute {
			return fmt.Errorf("redisstore.WithTimeout: must be > 0 and <= 1m, got %s", d)
		}
		o.timeout = d
		return nil
	})
}

// WithMaxLag sets how much longer than the timeout a call may wait for its
// answer while the process runs late (default 1s, 0 to
// 1m; 0 waits the timeout only). On a saturated host a goroutine
// runs tens or hundreds of milliseconds after its reply arrived: a call
// then waits the timeout plus the lag the Store's timers have shown lately
// (how late they fired), and, each time its own timer fires late, as long
// again, never more than the timeout plus WithMaxLag in all. Redis's
// client is given that much too, so that a reply read late is not a
// timeout. On a host that runs on time the lag is about zero and a frozen
// Redis fails each call after the timeout.
func WithMaxLag(d time.Duration) Option {
	return optionFunc(func(o *options) error {
		if d < 0 || d > maxMaxLag {
			return fmt.Errorf("redisstore.WithMaxLag: must be between 0 and %s, got %s", maxMaxLag, d)
		}
		o.maxLag = d
		return nil
	})
}

// WithIdleExpiry sets how long a key outlives the time its state stops
// mattering (default 1s): a Redis key expires that long after
// its window's counts no longer weigh on a decision, or after its bucket is
// full again; approximate mode forgets a locally tracked key that long after
// the same moment. Between 1ms and 24h.
func WithIdleExpiry(d time.Duration) Option {
	return optionFunc(func(o *options) error {
		if d < time.Millisecond || d > 24*time.Hour {
			return fmt.Errorf("redisstore.WithIdleExpiry: must be between 1ms and 24h, got %s", d)
		}
		o.idle = d
		return nil
	})
}

// WithBatchSize sets how many decisions may share one pipeline, one round
// trip to Redis (default 128; 1 to 10000). Decisions
// that arrive while the Store's dispatchers are busy are sent together.
// With a client that honours contexts (ContextTimeoutEnabled), one call at
// a time is made on its caller's goroutine instead, which spares a lone
// Take two goroutine switches; the others are batched.
// With 1, batching is off: each Take makes its own call, on the caller's
// goroutine, bounded by the timeout through its context, which the client
// honours only with ContextTimeoutEnabled (else its ReadTimeout and
// WriteTimeout bound it). The size also bounds the pipelines of the
// approximate mode's sync.
func WithBatchSize(n int) Option {
	return optionFunc(func(o *options) error {
		if n < 1 || n > maxBatchSize {
			return fmt.Errorf("redisstore.WithBatchSize: must be between 1 and %d, got %d", maxBatchSize, n)
		}
		o.batch = n
		return nil
	})
}

// WithSyncPeriod sets how often approximate mode pushes this instance's
// counts to Redis and reads back the others' (default 100ms,
// between 1ms and 1m). The overshoot of approximate
// limits grows with it (see the package documentation). While syncs fail,
// once none has succeeded for 10 periods (at least 1s: the sync age; plus
// the lag of a busy host, see WithMaxLag), Take fails for approximate
// limits, and a Guard applies their rules' failure policy until a sync
// succeeds again. Syncs that are only late do not make it fail.
func WithSyncPeriod(d time.Duration) Option {
	return optionFunc(func(o *options) error {
		if d < minSyncPeriod || d > maxSyncPeriod {
			return fmt.Errorf("redisstore.WithSyncPeriod: must be between %s and %s, got %s", minSyncPeriod, maxSyncPeriod, d)
		}
		o.syncPeriod = d
		return nil
	})
}

// WithMaxKeys bounds the keys approximate mode tracks locally (default
// 100000). A key that does not fit is decided in Redis, one round
// trip per decision, on the same counts, until idle keys are forgotten.
func WithMaxKeys(n int) Option {
	return optionFunc(func(o *options) error {
		if n < 1 || n > 1<<24 {
			return fmt.Errorf("redisstore.WithMaxKeys: must be between 1 and %d, got %d", 1<<24, n)
		}
		o.maxKeys = n
		return nil
	})
}
