package core

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluicekit/sluice/core/clock"
	"github.com/sluicekit/sluice/core/internal/rulefields"
	"github.com/sluicekit/sluice/core/internal/sysclock"
	"github.com/sluicekit/sluice/core/internal/worker"
	"github.com/sluicekit/sluice/core/store"
)

// Defaults and bounds of a Guard's store breakers (WithStoreBreaker,
// WithStoreLatencyBudget).
const (
	defaultStoreBackoff = time.Second // how long an open breaker leaves the store alone
	defaultStoreTrip    = 5           // consecutive failed rounds of calls that open it
	maxStoreTrip        = 1000
	defaultStoreBudget  = 20 * time.Millisecond // of the calls of exact rules
	minStoreBudget      = time.Millisecond
	maxStoreBudget      = time.Minute
	timedRounds         = 16 // the last rounds of calls timed, kept
	// A lagWatch's naps: lagNap each, wanted lagKeep at least, their
	// lateness kept by slots of lagSlot ns (67ms), lagSlots (8.6s).
	lagNap, lagKeep, lagSlot, lagSlots = time.Millisecond, time.Second, 1 << 26, 128
)

// WithStore gives the Guard the store s under name: rules whose Store is
// name keep their counts in s. The Guard does not close s; its owner does,
// after the Guard's last use.
func WithStore(name string, s store.Store) Option {
	return optionFunc(func(cfg *config) error {
		switch {
		case !rulefields.IsIdentifier(name):
			return fmt.Errorf("WithStore: name must be letters, digits, '_', '.' and '-', got %s", quote(name))
		case s == nil:
			return fmt.Errorf("WithStore(%s): store is nil", quote(name))
		case cfg.stores[name] != nil:
			return fmt.Errorf("WithStore(%s): a store of that name was already given", quote(name))
		}
		cfg.stores[name] = s
		return nil
	})
}

// WithStoreBreaker sets the breaker the Guard keeps for each store: after
// trip consecutive failed rounds of calls (default 5, 1 to 1000; 1 opens it
// on any failure) the breaker opens, and the Guard leaves the store alone
// for backoff (default 1s), up to 1h. Meanwhile the rules of that store
// apply their failure policy at once; then one request at a time probes the
// store, and a success closes the breaker. 0 keeps the default of either.
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
		if backoff > time.Hour {
			return fmt.Errorf("WithStoreBreaker: backoff must be <= 1h, got %s", backoff)
		}
		cfg.storeTrip, cfg.storeBackoff = cmp.Or(trip, cfg.storeTrip), cmp.Or(backoff, cfg.storeBackoff)
		return nil
	})
}

// WithStoreLatencyBudget sets how slow a store may answer exact rules
// before the Guard stops waiting for it (default 20ms, 1ms to 1m; 0 keeps
// the default): when the store's last 16 rounds of calls for exact rules
// all took longer than budget, or 12 of them longer than twice the budget,
// its exact breaker opens as after failures (see WithStoreBreaker), and those rules apply their
// failure policy at once instead of waiting; after the backoff one request
// probes, and a probe answered within the budget closes the breaker. Calls
// in flight together are one round, timed once. A call that fails is not
// timed; approximate rules, whose calls are local, are never.
//
// A store slower than the budget on every call (a Redis 40ms away) opens
// the breaker after 17 calls, one three times slower on 3 calls in 4 after
// 13; slow replies among fast ones do not, nor does a busy host that runs
// goroutines (or Redis) late: the calls must be over the budget by more
// than the host's lag over their span, which a goroutine of the Guard
// measures, sleeping 1ms at a time, from the first call over the budget
// until a second (or that span) after the last, or Close. No request waits
// for it; the 17th call is the first whose span it measured, and a probe
// over the budget whose span it did not measure lets the next request probe.
func WithStoreLatencyBudget(budget time.Duration) Option {
	return optionFunc(func(cfg *config) error {
		if budget != 0 && (budget < minStoreBudget || budget > maxStoreBudget) {
			return fmt.Errorf("WithStoreLatencyBudget: budget must be between %s and %s (0: the default), got %s", minStoreBudget, maxStoreBudget, budget)
		}
		cfg.storeBudget = cmp.Or(budget, cfg.storeBudget)
		return nil
	})
}

// storeConn is a store as a Guard uses it: one breaker per mode, so that
// the approximate rules' local decisions never hide the exact rules'
// failures, nor the exact rules' failures stop approximate ones.
type storeConn struct {
	name          string
	s             store.Store
	exact, approx storeHealth
}

func newStoreConn(name string, s store.Store, cfg *config, c clock.Clock, lw *lagWatch, rp *reporter) *storeConn {
	trip := int64(cmp.Or(cfg.storeTrip, defaultStoreTrip))
	backoff := int64(cmp.Or(cfg.storeBackoff, defaultStoreBackoff))
	conn := &storeConn{name: name, s: s}
	conn.exact = storeHealth{store: name, mode: store.Exact, backoff: backoff, trip: trip,
		budget: int64(cmp.Or(cfg.storeBudget, defaultStoreBudget)), clock: c, lag: lw, reporter: rp}
	conn.approx = storeHealth{store: name, mode: store.Approximate, backoff: backoff, trip: trip, reporter: rp}
	conn.exact.openUntil.Store(healthy)
	conn.approx.openUntil.Store(healthy)
	return conn
}

// storeHealth is the breaker of one mode of a store.
//
// It is closed while openUntil is healthy: every request calls the store.
// A failed call makes its request apply the failure policy and, when it is
// the first failure of its round, adds one to streak; a success resets
// streak. A round is the calls made between two counted failures: round
// is the number of counted failures, read when a call starts, and a
// failure counts only if round has not moved since (CompareAndSwap). When
// streak reaches trip, or the last timedRounds rounds were too slow
// for the budget (see WithStoreLatencyBudget), the breaker opens: openUntil is the
// clock time from which one request may probe the store. The probe claims
// the breaker by setting openUntil to inProbe, so no other request probes
// until it ends: its success (within the budget) closes the breaker, its
// failure opens it for another backoff from the probe's start, and a probe
// whose caller gave up lets the next request probe.
type storeHealth struct {
	store    string
	mode     store.Mode
	backoff  int64
	trip     int64
	budget   int64       // 0: calls are not timed
	clock    clock.Clock // times the calls, when budget > 0
	lag      *lagWatch   // nil on a clock other than the system's: no lag
	reporter *reporter

	openUntil atomic.Int64 // healthy while closed; inProbe while a probe runs
	round     atomic.Int64
	streak    atomic.Int64
	errors    atomic.Int64 // failed calls
	fallbacks atomic.Int64 // decisions made by failure policies
	openedAt  atomic.Int64 // when the breaker last opened
	why       atomic.Pointer[error]
	opening   sync.Mutex // held by open while it opens the breaker
	// timed holds the durations of the last timed rounds (0: none yet),
	// the one of round i at i%timedRounds, started at starts[i%timedRounds];
	// timedEnd is when the last timed call ended: a call that started
	// before it was in flight with it, and is not timed (see
	// WithStoreLatencyBudget).
	timed    [timedRounds]atomic.Int64
	starts   [timedRounds]atomic.Int64
	rounds   atomic.Int64
	timedEnd atomic.Int64
}

// The states of storeHealth.openUntil other than a time; probing is the
// round a probe of an open breaker calls in.
const (
	healthy = math.MinInt64
	inProbe = math.MaxInt64
	probing = -1
)

// allow reports whether a request at now may call the store, and the
// round it calls in (probing for the probe of an open breaker): always
// while the breaker is closed; while it is open, one probe at a time once
// the backoff has passed.
func (b *storeHealth) allow(now int64) (int64, bool) {
	u := b.openUntil.Load()
	if u == healthy {
		return b.round.Load(), true
	}
	return probing, now >= u && b.openUntil.CompareAndSwap(u, inProbe)
}

// succeeded records a call of round, started at start, that worked: the
// streak of failures ends, and an open breaker closes (the reporter hears
// of it); unless the store is too slow (see WithStoreLatencyBudget), which
// opens the breaker, or keeps it open. A call over the budget closes no
// breaker (one in flight with the call that opened it would), but a probe
// within it net of the host's lag does.
func (b *storeHealth) succeeded(start, round int64) {
	closes := true
	if b.budget > 0 {
		end := int64(b.clock.Now())
		if b.slow(start, end, round) {
			err := fmt.Errorf("store answered too slowly for the latency budget %s: the median of its last %d calls took %s", time.Duration(b.budget), timedRounds, time.Duration(b.sorted()[timedRounds/2]))
			if round == probing {
				err = fmt.Errorf("store answered the probe in %s, over the latency budget %s", time.Duration(end-start), time.Duration(b.budget))
			}
			b.open(end, round, err)
			return
		}
		closes = round == probing || end-start <= b.budget
	}
	if b.streak.Load() != 0 {
		b.streak.Store(0)
	}
	if u := b.openUntil.Load(); closes && u != healthy && b.openUntil.CompareAndSwap(u, healthy) {
		b.reporter.send(&storeReport{name: b.store})
	}
}

// slow reports whether a call of round from start to end makes the store
// too slow: a probe over the budget; or, closed, the last timedRounds
// rounds (see WithStoreLatencyBudget). Either way, by more than the host's
// lag over their span (lagWatch): on a busy host a call's goroutine runs
// late after its reply came, which is not the store's latency. A probe
// over the budget whose span the lag was not measured over lets the next
// request probe (open then leaves the breaker so).
func (b *storeHealth) slow(start, end, round int64) bool {
	took := max(end-start, 1)
	if round == probing {
		if need := took - b.budget; need > 0 {
			if lag, known := b.lag.over(start, end, took); !known || lag < need {
				if !known {
					b.openUntil.CompareAndSwap(inProbe, end)
				}
				return true
			}
		}
		for i := range b.timed { // a fresh start
			b.timed[i].Store(0)
		}
		b.timedEnd.Store(end)
		return false
	}
	t := b.timedEnd.Load()
	if start < t || !b.timedEnd.CompareAndSwap(t, end) {
		return false // in flight with a timed call
	}
	i := b.rounds.Add(1)
	b.timed[i%timedRounds].Store(took)
	b.starts[i%timedRounds].Store(start)
	r := b.sorted()
	need := max(r[0]-b.budget, r[timedRounds/4]-2*b.budget, 0) // the host's lag that explains them
	if took <= b.budget && need == 0 {
		return false
	}
	from := start // of the oldest round kept
	for j := range b.starts {
		if b.timed[j].Load() > 0 {
			from = min(from, b.starts[j].Load())
		}
	}
	lag, known := b.lag.over(from, end, end-from)
	return known && lag < need
}

// lagWatch measures the host's lag (how late a Guard's goroutines run)
// for its stores' latency budgets, off the requests' path: while wanted,
// its goroutine naps lagNap at a time and keeps the most a nap overslept
// in each slot of lagSlot of the clock (slot n at n%lagSlots).
type lagWatch struct {
	worker           worker.Worker
	clock            clock.Clock
	sleep            func(time.Duration)
	running, stopped atomic.Bool
	until, from, due atomic.Int64 // naps wanted until; ran from (0: none run); the nap in progress due at (0: none)
	slots            [lagSlots]struct{ n, late atomic.Int64 }
}

// newLagWatch returns the lagWatch of a Guard on clock c, nil unless c is
// the system clock.
func newLagWatch(c clock.Clock) *lagWatch {
	if _, sys := c.(*sysclock.System); sys {
		return &lagWatch{clock: c, sleep: time.Sleep}
	}
	return nil
}

// over returns the most a nap overslept from from to now, the nap in
// progress counted, and whether naps ran throughout; and wants naps for
// keep (at least lagKeep) after now. 0 and true for a nil or stopped w.
func (w *lagWatch) over(from, now, keep int64) (int64, bool) {
	if w == nil || w.stopped.Load() {
		return 0, true
	}
	w.until.Store(max(w.until.Load(), now+max(keep, int64(lagKeep))))
	if w.running.CompareAndSwap(false, true) {
		w.worker.Restart(w.nap)
	}
	if f := w.from.Load(); f == 0 || f > from {
		return 0, false
	}
	var lag int64
	if due := w.due.Load(); due != 0 {
		lag = max(now-due, 0)
	}
	for n := max(from/lagSlot, now/lagSlot-lagSlots+1); n <= now/lagSlot; n++ {
		if s := &w.slots[n%lagSlots]; s.n.Load() == n {
			lag = max(lag, s.late.Load())
		}
	}
	return lag, true
}

// nap naps until ctx ends or naps are no longer wanted.
func (w *lagWatch) nap(ctx context.Context) {
	defer w.running.Store(false)
	defer w.from.Store(0)
	now := int64(w.clock.Now())
	for w.from.Store(now); ctx.Err() == nil && now <= w.until.Load(); w.due.Store(0) {
		w.due.Store(now + int64(lagNap))
		w.sleep(lagNap)
		end := int64(w.clock.Now())
		w.saw(end, end-now-int64(lagNap))
		now = end
	}
}

// saw records that a nap ending at end overslept by late.
func (w *lagWatch) saw(end, late int64) {
	s := &w.slots[end/lagSlot%lagSlots]
	if n := end / lagSlot; s.n.Load() != n {
		s.late.Store(0)
		s.n.Store(n)
	}
	s.late.Store(max(s.late.Load(), late))
}

// stop stops the naps for good; nil-safe.
func (w *lagWatch) stop() {
	if w != nil {
		w.stopped.Store(true)
		w.worker.Close()
	}
}

// sorted returns the durations of the last timed rounds, shortest first
// (0: none yet).
func (b *storeHealth) sorted() [timedRounds]int64 {
	var t [timedRounds]int64
	for i := range b.timed {
		t[i] = b.timed[i].Load()
	}
	slices.Sort(t[:])
	return t
}

// open opens the breaker at now, from round, for err: a probe's failure
// for another backoff; a closed breaker for a backoff, the reporter hearing
// of it.
func (b *storeHealth) open(now, round int64, err error) {
	if round == probing {
		b.openUntil.CompareAndSwap(inProbe, now+b.backoff)
		return
	}
	// When and why before it opens, lest Stores show the previous outage's.
	b.opening.Lock()
	defer b.opening.Unlock()
	if b.openUntil.Load() != healthy {
		return
	}
	b.openedAt.Store(now)
	b.why.Store(&err)
	b.openUntil.Store(now + b.backoff) // only open changes healthy to another state
	b.reporter.send(&storeReport{name: b.store, err: err})
}

// failed records a call of round, made at now, that failed with err: a
// probe's failure opens the breaker for another backoff; the first failure
// of a round adds to the streak, and the one that makes it trip opens the
// breaker.
func (b *storeHealth) failed(now, round int64, err error) {
	b.errors.Add(1)
	if round == probing {
		b.open(now, round, err)
		return
	}
	if !b.round.CompareAndSwap(round, round+1) {
		return
	}
	if b.streak.Add(1) >= b.trip {
		if b.mode == store.Approximate {
			err = fmt.Errorf("approximate mode: %w", err)
		}
		b.open(now, round, err)
	}
}

// abandoned records that the caller of a call of round, made at now, gave
// up: not the store's failure, but a probe's end, after which the next
// request probes.
func (b *storeHealth) abandoned(now, round int64) {
	if round == probing {
		b.openUntil.CompareAndSwap(inProbe, now)
	}
}

// retryAfter is the hint of a request that the failure policy closed
// rejected at now: the time until a probe while the breaker is open, else
// the backoff (the Guard cannot tell a passing failure from the first of
// an outage, nor when a probe in flight ends).
func (b *storeHealth) retryAfter(now int64) time.Duration {
	if u := b.openUntil.Load(); u != healthy && u != inProbe {
		return time.Duration(max(u-now, 0))
	}
	return time.Duration(b.backoff)
}

// StoreStatus is the state of a store a Guard uses.
type StoreStatus struct {
	Name string
	// Healthy is false while the breaker of one of the store's modes that
	// the rules use is open (see Modes).
	Healthy bool
	// Errors and Fallbacks are the sums of the Modes'.
	Errors, Fallbacks int64
	// Modes are the states of the modes (store.Exact first) that the
	// Guard's rules use or that have failed, each with a breaker of its
	// own ("Shared stores" in the package doc).
	Modes []StoreModeStatus
}

// StoreModeStatus is the state of the rules of one mode of a store.
type StoreModeStatus struct {
	Mode store.Mode
	// Healthy is false while the mode's breaker is open: from the failure
	// (or the latency over the budget) that opened it (see
	// WithStoreBreaker, WithStoreLatencyBudget) until a call succeeds
	// again. Approximate rules fail once their store cannot synchronize
	// counts for a while (package redisstore: WithMaxSyncAge).
	Healthy bool
	// Since is when the breaker opened, on the Guard's clock (as
	// Snapshot.At), and Err why; both zero while Healthy.
	Since time.Duration
	Err   error
	// Latency is the median of the last 16 rounds of calls of exact rules
	// (see WithStoreLatencyBudget): 0 until there were 8, and for
	// approximate rules.
	Latency time.Duration
	// Errors counts the calls that failed; Fallbacks the decisions that
	// rules made by their failure policy (local, open or closed) instead
	// of the store, because their call failed, the breaker was open, or
	// the store could not keep their key (store.ErrKeyUnavailable).
	Errors, Fallbacks int64
	// Rules are the Guard's rules of this store and mode, in rule order:
	// while the mode is not Healthy, each applies its OnFailure policy,
	// FailLocal its LocalLimit, which this instance applies alone.
	Rules []Rule
}

// Stores returns the state of the Guard's stores, in name order.
func (g *Guard) Stores() []StoreStatus {
	rules := g.rules.Load().rules
	out := make([]StoreStatus, 0, len(g.stores))
	for _, c := range g.stores {
		st := StoreStatus{Name: c.name, Healthy: true}
		for _, b := range []*storeHealth{&c.exact, &c.approx} {
			m := StoreModeStatus{Mode: b.mode, Healthy: b.openUntil.Load() == healthy, Latency: time.Duration(b.sorted()[timedRounds/2]),
				Errors: b.errors.Load(), Fallbacks: b.fallbacks.Load()}
			if !m.Healthy {
				m.Since = time.Duration(b.openedAt.Load())
				if e := b.why.Load(); e != nil {
					m.Err = *e
				}
			}
			for _, rs := range rules {
				if r := rs.rule; r.Store == c.name && r.Mode == b.mode {
					r.Overrides = maps.Clone(r.Overrides)
					m.Rules = append(m.Rules, r)
				}
			}
			if m.Rules == nil && m.Healthy && m.Errors == 0 && m.Fallbacks == 0 {
				continue
			}
			st.Healthy = st.Healthy && (m.Healthy || m.Rules == nil)
			st.Errors += m.Errors
			st.Fallbacks += m.Fallbacks
			st.Modes = append(st.Modes, m)
		}
		out = append(out, st)
	}
	slices.SortFunc(out, func(a, b StoreStatus) int { return strings.Compare(a.Name, b.Name) })
	return out
}
