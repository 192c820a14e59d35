package throttle

import (
	"cmp"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/clock"
	"github.com/sluicekit/sluice/core/internal/sysclock"
	"github.com/sluicekit/sluice/core/internal/window"
)

// Defaults of the options.
const (
	defaultK            = 2.0
	defaultWindow       = 5 * time.Second
	defaultMaxPause     = 5 * time.Minute
	defaultMaxResources = 1024
)

const buckets = 10 // the number of buckets a window is counted in

// Throttle decides whether a client sends a call to its upstream (see the
// package documentation). It is safe for concurrent use.
type Throttle struct {
	clock    clock.Clock
	k        float64
	window   time.Duration
	maxPause time.Duration
	maxRes   int
	random   func() float64 // in [0, 1): a resource's first share owed (see state.owed); the tests set it

	mu        sync.Mutex
	resources map[string]*state
	overflow  *state // the resources beyond maxRes
}

// state is one resource's counts over the window, and its pause.
type state struct {
	mu sync.Mutex
	// counts are the calls Record was told of (window.Pass), the ones the
	// upstream accepted among them (window.Complete) and the calls Allow
	// rejected by probability (window.Block).
	counts      *window.LeapArray
	failing     float64 // the upstream's recent rejection ratio (see weight)
	pausedUntil time.Duration
	owed        float64       // in [0, 1): what the resource is owed (see the package doc)
	since       time.Duration // when the window's counts began: Allow's first call with none counted
}

// Option configures New.
type Option func(*Throttle) error

// WithK sets K, the attempts per accepted call allowed before the client
// throttles (default 2). It must be at least 1: below, the client
// would throttle an upstream that accepts every call.
func WithK(k float64) Option {
	return option(!(k >= 1) || k > 1e6, "WithK", "between 1 and 1e6", k, func(t *Throttle) { t.k = k })
}

// WithWindow sets the sliding window calls are counted over (default
// 5s), between 10ms and 24h. A longer window holds more history: an
// upstream that keeps failing gets fewer calls (about one per window) and
// one that recovers waits longer for them.
func WithWindow(d time.Duration) Option {
	return option(d < 10*time.Millisecond || d > 24*time.Hour, "WithWindow", "between 10ms and 24h", d, func(t *Throttle) { t.window = d })
}

// WithMaxPause bounds how long an upstream's retry time pauses a resource
// (default 5m); 0 ignores retry times.
func WithMaxPause(d time.Duration) Option {
	return option(d < 0, "WithMaxPause", ">= 0", d, func(t *Throttle) { t.maxPause = d })
}

// WithMaxResources bounds the resources counted apart (default
// 1024); beyond, the others share one count, until a resource counted
// apart has nothing counted in its window and no pause: it is then
// forgotten, as one never seen, and the next new resource takes its place.
func WithMaxResources(n int) Option {
	return option(n < 1, "WithMaxResources", ">= 1", n, func(t *Throttle) { t.maxRes = n })
}

// option returns the Option named name that sets t with set, or, when
// bad, fails saying the value got must be want.
func option(bad bool, name, want string, got any, set func(*Throttle)) Option {
	return func(t *Throttle) error {
		if bad {
			return fmt.Errorf("throttle: %s: must be %s, got %v", name, want, got)
		}
		set(t)
		return nil
	}
}

// New returns a Throttle on clock c: a Guard's (guard.Clock()), so that
// a fake clock drives both in tests; nil is the system's monotonic clock.
func New(c clock.Clock, opts ...Option) (*Throttle, error) {
	t := &Throttle{clock: cmp.Or[clock.Clock](c, sysclock.New()), k: defaultK, window: defaultWindow, maxPause: defaultMaxPause,
		maxRes: defaultMaxResources, random: rand.Float64, resources: map[string]*state{}}
	for _, o := range opts {
		if o == nil {
			return nil, errors.New("throttle: New: nil option")
		}
		if err := o(t); err != nil {
			return nil, err
		}
	}
	t.overflow = t.newState()
	return t, nil
}

// Error is the error of a call the Throttle rejected locally. It matches
// core.ErrBlocked.
type Error struct {
	Resource string
	// RetryAfter is the time left of the upstream's pause, 0 when the call
	// was rejected for the upstream's rejections.
	RetryAfter  time.Duration
	Probability float64 // the share of calls the Throttle rejected at the decision; 1 while paused
}

// Error describes the rejection.
func (e *Error) Error() string {
	if e.RetryAfter > 0 {
		return fmt.Sprintf("sluice: %s throttled by the client: the upstream asked to retry after %s", e.Resource, e.RetryAfter)
	}
	return fmt.Sprintf("sluice: %s throttled by the client: the upstream rejects calls (rejecting %.0f%% of calls)", e.Resource, 100*e.Probability)
}

// Is reports whether target is core.ErrBlocked.
func (e *Error) Is(target error) bool { return target == core.ErrBlocked }

// state returns the state of resource at now.
func (t *Throttle) state(resource string, now time.Duration) *state {
	t.mu.Lock()
	defer t.mu.Unlock()
	if s, ok := t.resources[resource]; ok {
		return s
	}
	if len(t.resources) >= t.maxRes && !t.forgetIdle(now) {
		return t.overflow
	}
	s := t.newState()
	t.resources[resource] = s
	return s
}

// forgetIdle forgets a resource whose state is as a new one's at now,
// nothing counted in its window and no pause, among 8 of them (the map's
// order is random), and reports whether it found one. t.mu is held.
func (t *Throttle) forgetIdle(now time.Duration) bool {
	looks := 0
	for name, s := range t.resources {
		s.mu.Lock()
		c := s.counts.SnapshotOver(int64(now), t.window)
		idle := s.pausedUntil <= now && c.Pass+c.Block == 0
		s.mu.Unlock()
		if idle {
			delete(t.resources, name)
		}
		if looks++; idle || looks == 8 {
			return idle
		}
	}
	return false
}

// newState returns the state of a resource not seen yet.
func (t *Throttle) newState() *state {
	counts, _ := window.New(buckets, t.window/buckets*buckets) // a whole number of ns per bucket: cannot fail
	return &state{counts: counts, owed: t.random()}
}

// Allow returns nil when a call to resource may be sent, or an *Error.
// A call it rejects counts as attempted (weighted, see the package
// documentation); one it lets through counts when Record says how it
// ended, so that a call the program drops after Allow (a Guard's rule
// blocked it, say) does not count.
func (t *Throttle) Allow(resource string) error {
	now := t.clock.Now()
	s := t.state(resource, now)
	s.mu.Lock()
	defer s.mu.Unlock()
	if left := s.pausedUntil - now; left > 0 {
		return &Error{Resource: resource, RetryAfter: left, Probability: 1}
	}
	p := t.share(s, now)
	if s.owed += 1 - p; s.owed >= 1 {
		s.owed--
		return nil
	}
	s.counts.Add(int64(now), window.Block, 1)
	return &Error{Resource: resource, Probability: p}
}

// share returns the share of the calls of s to reject at now (see the
// package documentation), noting when the window's counts began.
func (t *Throttle) share(s *state, now time.Duration) float64 {
	c := s.counts.SnapshotOver(int64(now), t.window)
	sent, acc, rejected := c.Pass, c.Complete, c.Block
	if sent+rejected == 0 {
		s.since = now
	}
	seen := min(max(float64(now-s.since)/float64(t.window), minSeen), 1)
	req := float64(sent) + t.weight(s.failing)*float64(rejected)
	return max(0, (req-t.k*float64(acc))/(req+seen))
}

// Record tells the Throttle how a call to resource that Allow let through
// ended: accepted, or rejected by the upstream for overload (HTTP 429 or
// 503, gRPC ResourceExhausted or Unavailable, or no answer). retryAfter,
// when above 0, is the upstream's retry time: the resource is paused for
// that long, at most the maximum pause, if the upstream rejects at least
// 1 - 1/K of the recent calls (see the package documentation).
func (t *Throttle) Record(resource string, accepted bool, retryAfter time.Duration) {
	now := t.clock.Now()
	s := t.state(resource, now)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.counts.Add(int64(now), window.Pass, 1)
	failed := 1.0
	if accepted {
		s.counts.Add(int64(now), window.Complete, 1)
		failed = 0
	}
	s.failing += failingWeight * (failed - s.failing)
	if d := min(retryAfter, t.maxPause); d > 0 && now+d > s.pausedUntil && t.weight(s.failing) == 1 {
		s.pausedUntil = now + d
	}
}

// failingWeight is the weight of the latest call in the upstream's recent
// rejection ratio (an exponentially weighted moving average of the calls
// Record is told of).
const failingWeight = 0.25

// minSeen is the least share of a window the rejection share's doubt, a
// call per window, is scaled to (see the package doc).
const minSeen = 0.5

// weight returns how much a call rejected locally counts as attempted,
// given the upstream's recent rejection ratio (see the package doc): fully
// from 1 - 1/K, the share of calls an upstream rejects when the throttle
// holds the client to K attempts per accepted call, down to 0 at none.
func (t *Throttle) weight(failing float64) float64 {
	balance := 1 - 1/t.k
	if failing >= balance {
		return 1
	}
	return failing / balance
}
