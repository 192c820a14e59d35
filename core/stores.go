package core

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/sluicekit/sluice/core/flow"
	"github.com/sluicekit/sluice/core/hotspot"
	"github.com/sluicekit/sluice/core/store"
)

// Defaults of a Guard's store breaker (WithStoreBackoff, WithStoreTrip).
const (
	// DefaultStoreBackoff is how long a Guard leaves a store alone once
	// its breaker opened, before one request probes it.
	DefaultStoreBackoff = time.Second
	// DefaultStoreTrip is how many consecutive failed rounds of calls open
	// a store's breaker.
	DefaultStoreTrip = 5
)

// MaxStoreTrip bounds WithStoreTrip.
const MaxStoreTrip = 1000

// WithStore gives the Guard the store s under name: rules whose Store is
// name keep their counts in s. The Guard does not close s; its owner does,
// after the Guard's last use.
func WithStore(name string, s store.Store) Option {
	return optionFunc(func(cfg *config) error {
		switch {
		case !isIdentifier(name):
			return fmt.Errorf("WithStore: name must be letters, digits, '_', '.' and '-', got %q", name)
		case s == nil:
			return fmt.Errorf("WithStore(%q): store is nil", name)
		case cfg.stores[name] != nil:
			return fmt.Errorf("WithStore(%q): a store of that name was already given", name)
		}
		if cfg.stores == nil {
			cfg.stores = map[string]store.Store{}
		}
		cfg.stores[name] = s
		return nil
	})
}

// WithStoreBackoff sets how long the Guard leaves a store alone once its
// breaker opened (default DefaultStoreBackoff; see WithStoreTrip).
// Meanwhile the rules of that store apply their failure policy at once;
// then one request at a time probes the store, and a success closes the
// breaker.
func WithStoreBackoff(d time.Duration) Option {
	return optionFunc(func(cfg *config) error {
		if d <= 0 {
			return fmt.Errorf("WithStoreBackoff: must be > 0, got %s", d)
		}
		cfg.storeBackoff = d
		return nil
	})
}

// WithStoreTrip sets how many consecutive failed rounds of calls open a
// store's breaker (default DefaultStoreTrip, 1 to MaxStoreTrip). A call
// that fails makes only its own request apply the failure policy; a
// success resets the count. Calls that were in flight together form one
// round: when several fail, the first counts and the others do not, so a
// stall of the host (or of Redis) that times out every call in flight at
// once counts once, and only failures that go on after it count again.
// 1 opens the breaker on any failure.
func WithStoreTrip(rounds int) Option {
	return optionFunc(func(cfg *config) error {
		if rounds < 1 || rounds > MaxStoreTrip {
			return fmt.Errorf("WithStoreTrip: must be between 1 and %d, got %d", MaxStoreTrip, rounds)
		}
		cfg.storeTrip = rounds
		return nil
	})
}

// storeConn is a store as a Guard uses it: with a breaker and counters.
//
// The breaker is closed while openUntil is healthy: every request calls
// the store. A failed call makes its request apply the failure policy and,
// when it is the first failure of its round, adds one to streak; a success
// resets streak. A round is the calls made between two counted failures:
// round is the number of counted failures, read when a call starts, and a
// failure counts only if round has not moved since (CompareAndSwap). When
// streak reaches trip, the breaker opens: openUntil is the clock time from
// which one request may probe the store. The probe claims the breaker by
// setting openUntil to inProbe, so no other request probes until it ends:
// its success closes the breaker, its failure opens it for another
// backoff from the probe's start, and a probe whose caller gave up lets
// the next request probe.
type storeConn struct {
	name     string
	s        store.Store
	backoff  int64
	trip     int64
	reporter *reporter

	openUntil atomic.Int64 // healthy while closed; inProbe while a probe runs
	round     atomic.Int64
	streak    atomic.Int64
	errors    atomic.Int64 // failed calls
	fallbacks atomic.Int64 // decisions made by failure policies
}

const (
	healthy = math.MinInt64
	inProbe = math.MaxInt64
)

// probing is the round a probe of an open breaker calls in.
const probing = -1

func newStoreConn(name string, s store.Store, backoff time.Duration, trip int, rp *reporter) *storeConn {
	if trip == 0 {
		trip = DefaultStoreTrip
	}
	c := &storeConn{name: name, s: s, backoff: int64(backoff), trip: int64(trip), reporter: rp}
	c.openUntil.Store(healthy)
	return c
}

// allow reports whether a request at now may call the store, and the
// round it calls in (probing for the probe of an open breaker): always
// while the breaker is closed; while it is open, one probe at a time once
// the backoff has passed.
func (c *storeConn) allow(now int64) (int64, bool) {
	u := c.openUntil.Load()
	if u == healthy {
		return c.round.Load(), true
	}
	return probing, now >= u && c.openUntil.CompareAndSwap(u, inProbe)
}

// succeeded records a call that worked: the streak of failures ends, and
// an open breaker closes (the reporter hears of it).
func (c *storeConn) succeeded() {
	if c.streak.Load() != 0 {
		c.streak.Store(0)
	}
	if u := c.openUntil.Load(); u != healthy && c.openUntil.CompareAndSwap(u, healthy) {
		c.reporter.send(report{store: &storeReport{name: c.name}})
	}
}

// failed records a call of round, made at now, that failed with err: a
// probe's failure opens the breaker for another backoff; the first failure
// of a round adds to the streak, and the one that makes it trip opens the
// breaker (the reporter hears of it).
func (c *storeConn) failed(now, round int64, err error) {
	c.errors.Add(1)
	if round == probing {
		c.openUntil.CompareAndSwap(inProbe, now+c.backoff)
		return
	}
	if !c.round.CompareAndSwap(round, round+1) {
		return
	}
	if c.streak.Add(1) >= c.trip && c.openUntil.CompareAndSwap(healthy, now+c.backoff) {
		c.reporter.send(report{store: &storeReport{name: c.name, err: err}})
	}
}

// abandoned records that the caller of a call of round, made at now, gave
// up: not the store's failure, but a probe's end, after which the next
// request probes.
func (c *storeConn) abandoned(now, round int64) {
	if round == probing {
		c.openUntil.CompareAndSwap(inProbe, now)
	}
}

// retryAfter is the hint of a request that the failure policy closed
// rejected at now: the time until a probe while the breaker is open, else
// the backoff (the Guard cannot tell a passing failure from the first of
// an outage, nor when a probe in flight ends).
func (c *storeConn) retryAfter(now int64) time.Duration {
	if u := c.openUntil.Load(); u != healthy && u != inProbe {
		return time.Duration(max(u-now, 0))
	}
	return time.Duration(c.backoff)
}

// StoreStatus is the state of a store a Guard uses.
type StoreStatus struct {
	Name string
	// Healthy is false while the store's breaker is open: from the failure
	// that opened it (see WithStoreTrip) until a call succeeds again.
	Healthy bool
	// Errors counts the calls that failed; Fallbacks the decisions that
	// rules made by their failure policy (local, open or closed) instead
	// of the store, because their call failed or the breaker was open.
	Errors, Fallbacks int64
}

// Stores returns the state of the Guard's stores, in name order.
func (g *Guard) Stores() []StoreStatus {
	out := make([]StoreStatus, 0, len(g.stores))
	for _, c := range g.stores {
		out = append(out, StoreStatus{Name: c.name, Healthy: c.openUntil.Load() == healthy, Errors: c.errors.Load(), Fallbacks: c.fallbacks.Load()})
	}
	slices.SortFunc(out, func(a, b StoreStatus) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// remoteRule is the part of a flow or hotspot rule with a store.
type remoteRule struct {
	conn      *storeConn
	lim       store.Limit
	policy    FailurePolicy
	overrides map[string]int64 // a hotspot rule's (the rule's own copy)
	// The limiters of the local failure policy, at LocalLimit: local for
	// a flow rule, localHot for a hotspot rule.
	local    flow.Limiter
	localHot *hotspot.Limiter
}

// compileRemote makes the remote part of rule r, which has a store,
// carrying the local fallback's state over from prev.
func compileRemote(r Rule, conns map[string]*storeConn, prev *remoteRule) (*remoteRule, error) {
	conn := conns[r.Store]
	if conn == nil {
		return nil, fmt.Errorf("store %q is not given to the Guard (core.WithStore)", r.Store)
	}
	rr := &remoteRule{
		conn:      conn,
		policy:    r.OnFailure,
		overrides: r.Overrides,
		lim: store.Limit{
			Algorithm: flow.Algorithm(r.Algorithm), Limit: r.Limit, Window: r.Window,
			Burst: r.Burst, MaxWait: r.MaxWait, Mode: store.Mode(r.Mode),
		},
	}
	if err := rr.lim.Validate(); err != nil {
		return nil, err
	}
	if r.OnFailure != FailLocal {
		return rr, nil
	}
	local := r
	local.Limit = r.LocalLimit
	var err error
	if r.Kind == KindHotspot {
		var p *hotspot.Limiter
		if prev != nil {
			p = prev.localHot
		}
		rr.localHot, err = hotspot.New(local.hotspotConfig(), p)
	} else {
		var p flow.Limiter
		if prev != nil {
			p = prev.local
		}
		rr.local, err = flow.New(local.flowConfig(), p)
	}
	return rr, err
}

// valueKey returns the store key of a hotspot rule's value: the rule's name
// and the value ("=" before it), or a SHA-256 of a long value ("#" before
// it), so that keys stay short and the same in every instance, and no short
// value a client sends names a long value's key.
func valueKey(rule, value string) string {
	if len(value) <= 64 {
		return rule + "\x00=" + value
	}
	sum := sha256.Sum256([]byte(value))
	return rule + "\x00#" + hex.EncodeToString(sum[:16])
}

// limitOf returns the limit of a hotspot rule's value: its override's, or
// the rule's.
func (rr *remoteRule) limitOf(value string) store.Limit {
	lim := rr.lim
	if v, ok := rr.overrides[value]; ok {
		lim.Limit = v
	}
	return lim
}

// take decides n requests at now for the rule of rr, in h: under h.key in
// the store, or by the failure policy (h.fallback). For a hotspot rule, lim
// is the value's limit and value the value, which the local policy limits.
// It returns an error only when ctx ended during the store's call.
func (rr *remoteRule) take(ctx context.Context, h *held, now int64, lim store.Limit, value string, n int64) error {
	c := rr.conn
	if round, ok := c.allow(now); ok {
		d, err := c.s.Take(ctx, h.key, lim, n)
		if err == nil {
			c.succeeded()
			h.d.Decision = d
			return nil
		}
		if ctxErr := ctx.Err(); ctxErr != nil && errors.Is(err, ctxErr) {
			c.abandoned(now, round)
			return err // the caller gave up: not the store's failure
		}
		c.failed(now, round, err)
	}
	c.fallbacks.Add(1)
	h.rs.stats.fallbacks.Add(1)
	h.fallback = true
	switch {
	case rr.policy == FailOpen:
		h.d.Decision = flow.Decision{OK: true, Limit: lim.Limit, Remaining: lim.Limit}
	case rr.policy == FailClosed:
		h.d.Decision = flow.Decision{Limit: lim.Limit, RetryAfter: c.retryAfter(now)}
	case rr.localHot != nil:
		h.d = rr.localHot.Acquire(now, value, n)
	default:
		h.d.Decision = rr.local.Acquire(now, n)
	}
	return nil
}

// undo gives back a reservation h made by rr.
func (rr *remoteRule) undo(h *held, n int64) {
	switch {
	case !h.fallback:
		// Best effort: a failure leaves the reservation counted until the
		// window moves on.
		lim := rr.lim
		lim.Limit = h.d.Limit
		_ = rr.conn.s.Undo(context.Background(), h.key, lim, h.d.Decision, n)
	case rr.policy != FailLocal:
	case rr.localHot != nil:
		rr.localHot.Undo(h.d, n)
	default:
		rr.local.Undo(h.d.Decision, n)
	}
}
