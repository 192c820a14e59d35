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

// DefaultStoreBackoff is how long a Guard stops calling a store after it
// failed, by default (WithStoreBackoff).
const DefaultStoreBackoff = time.Second

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

// WithStoreBackoff sets how long the Guard stops calling a store after a
// call failed (default DefaultStoreBackoff). Meanwhile the rules of that
// store apply their failure policy at once; then one request tries the
// store again, and its success brings the store back.
func WithStoreBackoff(d time.Duration) Option {
	return optionFunc(func(cfg *config) error {
		if d <= 0 {
			return fmt.Errorf("WithStoreBackoff: must be > 0, got %s", d)
		}
		cfg.storeBackoff = d
		return nil
	})
}

// storeConn is a store as a Guard uses it: with a health breaker and
// counters.
type storeConn struct {
	name    string
	s       store.Store
	backoff int64
	// downUntil is the clock time until which the store is not called
	// after a failure; healthy when the store works.
	downUntil atomic.Int64
	errors    atomic.Int64 // failed calls
	fallbacks atomic.Int64 // decisions made by failure policies
	reporter  *reporter
}

const healthy = math.MinInt64

func newStoreConn(name string, s store.Store, backoff time.Duration, rp *reporter) *storeConn {
	c := &storeConn{name: name, s: s, backoff: int64(backoff), reporter: rp}
	c.downUntil.Store(healthy)
	return c
}

// allow reports whether a request at now may call the store: always while
// it is healthy; after a failure, one request per backoff period.
func (c *storeConn) allow(now int64) bool {
	u := c.downUntil.Load()
	return u == healthy || now >= u && c.downUntil.CompareAndSwap(u, now+c.backoff)
}

// succeeded records a call that worked: the store is healthy, and the
// reporter hears of it when it was not.
func (c *storeConn) succeeded() {
	if u := c.downUntil.Load(); u != healthy && c.downUntil.CompareAndSwap(u, healthy) {
		c.reporter.send(report{store: &storeReport{name: c.name}})
	}
}

// failed records a call that failed with err at now: the store is left
// alone for the backoff, and the reporter hears of it when it was healthy.
func (c *storeConn) failed(now int64, err error) {
	c.errors.Add(1)
	if c.downUntil.Swap(now+c.backoff) == healthy {
		c.reporter.send(report{store: &storeReport{name: c.name, err: err}})
	}
}

// StoreStatus is the state of a store a Guard uses.
type StoreStatus struct {
	Name string
	// Healthy is false from a failed call until a call succeeds again.
	Healthy bool
	// Errors counts the calls that failed; Fallbacks the decisions that
	// rules made by their failure policy (local, open or closed) instead
	// of the store, because it failed or was being left alone after a
	// failure.
	Errors, Fallbacks int64
}

// Stores returns the state of the Guard's stores, in name order.
func (g *Guard) Stores() []StoreStatus {
	out := make([]StoreStatus, 0, len(g.stores))
	for _, c := range g.stores {
		out = append(out, StoreStatus{Name: c.name, Healthy: c.downUntil.Load() == healthy, Errors: c.errors.Load(), Fallbacks: c.fallbacks.Load()})
	}
	slices.SortFunc(out, func(a, b StoreStatus) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// remoteRule is the part of a flow or hotspot rule with a store.
type remoteRule struct {
	conn      *storeConn
	lim       store.Limit
	policy    string
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
// and the value, or a SHA-256 of a long value, so that keys stay short and
// the same in every instance.
func valueKey(rule, value string) string {
	if len(value) <= 64 {
		return rule + "\x00" + value
	}
	sum := sha256.Sum256([]byte(value))
	return rule + "\x00sha256:" + hex.EncodeToString(sum[:16])
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
	if c.allow(now) {
		d, err := c.s.Take(ctx, h.key, lim, n)
		if err == nil {
			c.succeeded()
			h.d.Decision = d
			return nil
		}
		if ctxErr := ctx.Err(); ctxErr != nil && errors.Is(err, ctxErr) {
			return err // the caller gave up: not the store's failure
		}
		c.failed(now, err)
	}
	c.fallbacks.Add(1)
	h.rs.stats.fallbacks.Add(1)
	h.fallback = true
	switch {
	case rr.policy == FailOpen:
		h.d.Decision = flow.Decision{OK: true, Limit: lim.Limit, Remaining: lim.Limit}
	case rr.policy == FailClosed:
		h.d.Decision = flow.Decision{Limit: lim.Limit, RetryAfter: time.Duration(max(c.downUntil.Load()-now, 0))}
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
