package core

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/sluicekit/sluice/core/internal/rulefields"
	"github.com/sluicekit/sluice/core/store"
)

// Defaults of a Guard's store breaker (WithStoreBreaker).
const (
	// defaultStoreBackoff is how long a Guard leaves a store alone once
	// its breaker opened, before one request probes it.
	defaultStoreBackoff = time.Second
	// defaultStoreTrip is how many consecutive failed rounds of calls open
	// a store's breaker.
	defaultStoreTrip = 5
)

// maxStoreTrip bounds WithStoreBreaker's trip.
const maxStoreTrip = 1000

// WithStore gives the Guard the store s under name: rules whose Store is
// name keep their counts in s. The Guard does not close s; its owner does,
// after the Guard's last use.
func WithStore(name string, s store.Store) Option {
	return optionFunc(func(cfg *config) error {
		switch {
		case !rulefields.IsIdentifier(name):
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

// WithStoreBreaker sets the breaker the Guard keeps for each store: after
// trip consecutive failed rounds of calls (default 5, 1 to 1000; 1 opens it
// on any failure) the breaker opens, and the Guard leaves the store alone
// for backoff (default 1s). Meanwhile the rules of that store apply their
// failure policy at once; then one request at a time probes the store, and
// a success closes the breaker. 0 keeps the default of either.
//
// A call that fails makes only its own request apply the failure policy; a
// success resets the count. Calls that were in flight together form one
// round: when several fail, the first counts and the others do not, so a
// stall of the host (or of Redis) that times out every call in flight at
// once counts once, and only failures that go on after it count again.
func WithStoreBreaker(trip int, backoff time.Duration) Option {
	return optionFunc(func(cfg *config) error {
		if trip < 0 || trip > maxStoreTrip {
			return fmt.Errorf("WithStoreBreaker: trip must be between 1 and %d (0: the default), got %d", maxStoreTrip, trip)
		}
		if backoff < 0 {
			return fmt.Errorf("WithStoreBreaker: backoff must be > 0 (0: the default), got %s", backoff)
		}
		if trip > 0 {
			cfg.storeTrip = trip
		}
		if backoff > 0 {
			cfg.storeBackoff = backoff
		}
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
		trip = defaultStoreTrip
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
	// that opened it (see WithStoreBreaker) until a call succeeds again.
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
