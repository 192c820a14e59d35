package core_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/clock"
	"github.com/sluicekit/sluice/core/store"
)

// byMode is a memory store whose calls for the limits of mode failing
// fail, and whose calls take delay on the fake clock fc (a slow store),
// counting the calls of each mode.
type byMode struct {
	store.Store
	fc      *clock.Fake
	failing atomic.Pointer[store.Mode]
	delay   atomic.Int64
	calls   sync.Map // store.Mode -> *atomic.Int64
}

func newByMode(t *testing.T, fc *clock.Fake) *byMode {
	m, err := store.NewMemory(clock.NewFake(0), 0)
	require.NoError(t, err)
	return &byMode{Store: m, fc: fc}
}

func (s *byMode) fail(m store.Mode) { s.failing.Store(&m) }

func (s *byMode) count(m store.Mode) int64 {
	v, _ := s.calls.LoadOrStore(m, new(atomic.Int64))
	return v.(*atomic.Int64).Load()
}

func (s *byMode) Take(ctx context.Context, key string, lim store.Limit, n int64) (store.Decision, error) {
	v, _ := s.calls.LoadOrStore(lim.Mode, new(atomic.Int64))
	v.(*atomic.Int64).Add(1)
	s.fc.Advance(time.Duration(s.delay.Load()))
	if f := s.failing.Load(); f != nil && *f == lim.Mode {
		return store.Decision{}, fmt.Errorf("byMode: %w", store.ErrUnavailable)
	}
	return s.Store.Take(ctx, key, lim, n)
}

// modesGuard returns a Guard on fc with an exact rule on resource "e"
// and an approximate one on "a", both on s, failing locally.
func modesGuard(t *testing.T, s store.Store, fc *clock.Fake, opts ...core.Option) *core.Guard {
	g, err := core.New(append([]core.Option{core.WithClock(fc), core.WithStore("shared", s), core.WithRules(
		core.Rule{Name: "exact", Resource: "e", Kind: core.KindFlow, Limit: 1000, Window: time.Hour, Store: "shared", LocalLimit: 100},
		core.Rule{Name: "approx", Resource: "a", Kind: core.KindFlow, Limit: 1000, Window: time.Hour, Store: "shared", Mode: store.Approximate, LocalLimit: 10},
	)}, opts...)...)
	require.NoError(t, err)
	return g
}

func enter(t *testing.T, g *core.Guard, resource string) {
	t.Helper()
	e, err := g.Enter(context.Background(), resource)
	require.NoError(t, err)
	e.Exit(nil)
}

// TestStoreApproximateRulesNeverHideExactFailures: an approximate rule's
// calls succeed (they are local) while the exact rule's fail; the exact
// breaker still opens after defaultStoreTrip failures, and the store
// reports its exact mode unhealthy since then, its approximate mode
// healthy. Before each mode had its breaker, every approximate success
// ended the exact failures' streak: the breaker never opened, and each
// exact request waited for its call to fail.
func TestStoreApproximateRulesNeverHideExactFailures(t *testing.T) {
	fc := clock.NewFake(time.Hour)
	s := newByMode(t, fc)
	g := modesGuard(t, s, fc)
	s.fail(store.Exact)
	for range 20 {
		enter(t, g, "a")
		enter(t, g, "e")
		fc.Advance(time.Millisecond)
	}
	assert.Equal(t, int64(core.DefaultStoreTrip), s.count(store.Exact), "the exact breaker opened after the trip")
	assert.Equal(t, int64(20), s.count(store.Approximate), "approximate rules still call the store")
	st := g.Stores()[0]
	require.Len(t, st.Modes, 2)
	ex, ap := st.Modes[0], st.Modes[1]
	assert.False(t, st.Healthy)
	assert.Equal(t, store.Exact, ex.Mode)
	assert.False(t, ex.Healthy)
	assert.Equal(t, time.Hour+(core.DefaultStoreTrip-1)*time.Millisecond, ex.Since, "the failure that opened it")
	assert.ErrorIs(t, ex.Err, store.ErrUnavailable)
	assert.Equal(t, int64(core.DefaultStoreTrip), ex.Errors)
	assert.Equal(t, int64(20), ex.Fallbacks)
	require.Len(t, ex.Rules, 1)
	assert.Equal(t, "exact", ex.Rules[0].Name)
	assert.Equal(t, core.FailLocal, ex.Rules[0].OnFailure)
	assert.Equal(t, int64(100), ex.Rules[0].LocalLimit)

	assert.Equal(t, store.Approximate, ap.Mode)
	assert.True(t, ap.Healthy)
	assert.Zero(t, ap.Since)
	assert.NoError(t, ap.Err)
	assert.Zero(t, ap.Errors+ap.Fallbacks)
	require.Len(t, ap.Rules, 1)
	assert.Equal(t, "approx", ap.Rules[0].Name)
	assert.Equal(t, int64(10), ap.Rules[0].LocalLimit)
	assert.Equal(t, int64(core.DefaultStoreTrip), st.Errors)
	assert.Equal(t, int64(20), st.Fallbacks)
}

// TestStoreApproximateFailuresOpenTheirOwnBreaker: a store that cannot
// keep approximate limits (a Redis store that cannot synchronize) opens
// the approximate breaker only; exact rules keep calling it, and the
// approximate rule decides on its local limit.
func TestStoreApproximateFailuresOpenTheirOwnBreaker(t *testing.T) {
	fc := clock.NewFake(time.Hour)
	s := newByMode(t, fc)
	g := modesGuard(t, s, fc)
	s.fail(store.Approximate)
	admitted := 0
	for range 20 {
		enter(t, g, "e")
		if e, err := g.Enter(context.Background(), "a"); err == nil {
			admitted++
			e.Exit(nil)
		}
	}
	assert.Equal(t, 10, admitted, "the approximate rule's local limit")
	assert.Equal(t, int64(20), s.count(store.Exact))
	assert.Equal(t, int64(core.DefaultStoreTrip), s.count(store.Approximate))
	st := g.Stores()[0]
	assert.False(t, st.Healthy)
	assert.True(t, st.Modes[0].Healthy)
	assert.False(t, st.Modes[1].Healthy)
	assert.ErrorContains(t, st.Modes[1].Err, "approximate mode: byMode: store unavailable")

	// The store can again: the probe after the backoff closes it.
	s.failing.Store(nil)
	fc.Advance(core.DefaultStoreBackoff)
	enter(t, g, "a")
	assert.True(t, g.Stores()[0].Healthy)
}

// TestStoreLatencyBudget: a store that answers every call, but in 40ms,
// twice the default budget, opens the exact breaker once 16 calls in a row
// were that slow; then requests are the policy's without calling it. A
// probe as slow keeps it open; once the store answers in 1ms, the next
// probe closes it. Before the budget, every request waited for the slow
// store, forever.
func TestStoreLatencyBudget(t *testing.T) {
	fc := clock.NewFake(time.Hour)
	s := newByMode(t, fc)
	g := modesGuard(t, s, fc)
	s.delay.Store(int64(40 * time.Millisecond))
	for range 30 {
		enter(t, g, "e")
	}
	assert.Equal(t, int64(16), s.count(store.Exact))
	ex := g.Stores()[0].Modes[0]
	assert.False(t, ex.Healthy)
	assert.EqualError(t, ex.Err, "store answered too slowly for the latency budget 20ms: the median of its last 16 calls took 40ms")
	assert.Zero(t, ex.Errors, "slow is not failed")
	assert.Equal(t, int64(14), ex.Fallbacks)
	assert.Equal(t, 40*time.Millisecond, ex.Latency)

	fc.Advance(core.DefaultStoreBackoff)
	enter(t, g, "e") // the probe: still slow
	enter(t, g, "e")
	assert.Equal(t, int64(17), s.count(store.Exact))
	assert.False(t, g.Stores()[0].Healthy)

	s.delay.Store(int64(time.Millisecond))
	fc.Advance(core.DefaultStoreBackoff)
	for range 20 {
		enter(t, g, "e")
	}
	assert.Equal(t, int64(37), s.count(store.Exact), "the probe closed it: every request calls the store")
	ex = g.Stores()[0].Modes[0]
	assert.True(t, ex.Healthy)
	assert.Equal(t, time.Millisecond, ex.Latency)
}

// TestStoreLatencySlowRepliesAmongFastOnes: replies slower than the
// store's timeout ever is, 11 calls in 16, do not open the breaker, nor do
// 15 in 16 under twice the budget. Twelve in sixteen over twice the budget
// do, within 16 calls, as does a Redis three times slower than the budget
// on 3 calls in 4 (redisstore's TestGuardMostlySlowRedisLatencyBudget).
func TestStoreLatencySlowRepliesAmongFastOnes(t *testing.T) {
	for _, tc := range []struct {
		slow  func(i int) bool
		took  time.Duration // a slow call's
		opens bool
	}{
		{func(i int) bool { return i%16 < 11 }, 10 * time.Second, false},
		{func(i int) bool { return i%16 != 0 }, 15 * time.Millisecond, false},
		{func(i int) bool { return i%16 < 12 }, 10 * time.Second, true},
		{func(i int) bool { return i%4 != 3 }, 10 * time.Second, true},
	} {
		fc := clock.NewFake(time.Hour)
		s := newByMode(t, fc)
		g := modesGuard(t, s, fc, core.WithStoreLatencyBudget(10*time.Millisecond))
		for i := range 100 {
			s.delay.Store(int64(time.Millisecond))
			if tc.slow(i) {
				s.delay.Store(int64(tc.took))
			}
			enter(t, g, "e")
		}
		if !tc.opens {
			assert.Equal(t, int64(100), s.count(store.Exact))
			assert.True(t, g.Stores()[0].Healthy)
			assert.Equal(t, tc.took, g.Stores()[0].Modes[0].Latency, "the median")
			continue
		}
		assert.LessOrEqual(t, s.count(store.Exact), int64(16))
		assert.False(t, g.Stores()[0].Healthy)
		assert.Equal(t, 10*time.Second, g.Stores()[0].Modes[0].Latency)
	}
}

// TestStoreLatencyCallsInFlightTogether: calls in flight together that
// are all slow (a stall of the host delays them all) are timed once: 11
// such rounds do not open the breaker, however many calls each holds.
func TestStoreLatencyCallsInFlightTogether(t *testing.T) {
	fc := clock.NewFake(time.Hour)
	s := newScripted(t)
	g := breakerGuard(t, s, fc)
	round := func() {
		s.hold.Store(true)
		var wg sync.WaitGroup
		const inFlight = 16
		for range inFlight {
			wg.Go(func() { assert.True(t, enterX(t, g)) })
		}
		require.Eventually(t, func() bool { return s.waiting.Load() == inFlight }, 5*time.Second, time.Millisecond)
		s.hold.Store(false)
		fc.Advance(time.Second) // every call in flight took a second
		for range inFlight {
			s.release <- struct{}{}
		}
		wg.Wait()
	}
	for range 11 {
		round()
	}
	assert.True(t, g.Stores()[0].Healthy, "11 slow rounds")
	round()
	assert.False(t, g.Stores()[0].Healthy, "12 slow rounds: %+v", g.Stores()[0].Modes[0])
}

func TestStoreLatencyBudgetValidated(t *testing.T) {
	for _, d := range []time.Duration{-time.Second, time.Microsecond, time.Hour} {
		_, err := core.New(core.WithStoreLatencyBudget(d))
		assert.ErrorContains(t, err, fmt.Sprintf("WithStoreLatencyBudget: budget must be between 1ms and 1m0s (0: the default), got %s", d))
	}
	_, err := core.New(core.WithStoreLatencyBudget(0))
	assert.NoError(t, err)
}

// A store that is far away answers exact rules in 30-40ms: the budget is
// raised above that, or every exact rule would apply its failure policy.
// Stores reports each mode's health, and what each rule does while its
// mode is unhealthy.
func ExampleWithStoreLatencyBudget() {
	s, err := store.NewMemory(clock.NewFake(0), 0) // a Redis store (redisstore.New) in production
	if err != nil {
		panic(err)
	}
	g, err := core.New(core.WithStore("redis", s), core.WithStoreLatencyBudget(100*time.Millisecond),
		core.WithRules(core.Rule{Name: "search", Resource: "GET /search", Kind: core.KindFlow, Limit: 100, Store: "redis", LocalLimit: 30}))
	if err != nil {
		panic(err)
	}
	defer g.Close()
	for _, m := range g.Stores()[0].Modes {
		r := m.Rules[0]
		fmt.Println(m.Mode, m.Healthy, r.Name, r.OnFailure, r.LocalLimit)
	}
	// Output: exact true search local 30
}
