package core_test

import (
	"context"
	"errors"
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

// scripted is a memory store whose calls fail while fail is set, and, while
// hold is set, wait for release first (calls in flight together).
type scripted struct {
	store.Store
	fail, hold atomic.Bool
	calls      atomic.Int64
	waiting    atomic.Int64
	release    chan struct{}
}

func newScripted(t *testing.T) *scripted {
	m, err := store.NewMemory(clock.NewFake(0), 0)
	require.NoError(t, err)
	return &scripted{Store: m, release: make(chan struct{})}
}

func (s *scripted) Take(ctx context.Context, key string, lim store.Limit, n int64) (store.Decision, error) {
	s.calls.Add(1)
	if err := ctx.Err(); err != nil {
		return store.Decision{}, fmt.Errorf("scripted: %w: %w", store.ErrUnavailable, err)
	}
	if s.hold.Load() {
		s.waiting.Add(1)
		<-s.release
		s.waiting.Add(-1)
	}
	if s.fail.Load() {
		return store.Decision{}, fmt.Errorf("scripted: %w", store.ErrUnavailable)
	}
	return s.Store.Take(ctx, key, lim, n)
}

// breakerGuard returns a Guard on fc with one fail-open rule on s.
func breakerGuard(t *testing.T, s store.Store, fc *clock.Fake, opts ...core.Option) *core.Guard {
	g, err := core.New(append([]core.Option{core.WithClock(fc), core.WithStore("shared", s),
		core.WithRules(core.Rule{Name: "r", Resource: "x", Kind: core.KindFlow, Limit: 1 << 40, Window: time.Hour, Store: "shared", OnFailure: core.FailOpen})},
		opts...)...)
	require.NoError(t, err)
	return g
}

// enterX enters x on g and reports whether the store decided (not the
// policy).
func enterX(t *testing.T, g *core.Guard) bool {
	before := g.Stores()[0].Fallbacks
	e, err := g.Enter(context.Background(), "x")
	require.NoError(t, err, "fail open")
	e.Exit(nil)
	return g.Stores()[0].Fallbacks == before
}

// TestStoreFailureIsOneRequests: failures that successes separate never
// open the breaker, however many: each failed call makes its own request
// the policy's, and the next request calls the store again.
func TestStoreFailureIsOneRequests(t *testing.T) {
	s := newScripted(t)
	fc := clock.NewFake(time.Hour)
	g := breakerGuard(t, s, fc)
	for i := range 200 {
		fail := i%5 != 4 // 4 failures, then a success
		s.fail.Store(fail)
		assert.Equal(t, !fail, enterX(t, g), "request %d", i)
		fc.Advance(time.Millisecond)
	}
	assert.Equal(t, int64(200), s.calls.Load(), "every request called the store")
	assert.Equal(t, []core.StoreStatus{{Name: "shared", Healthy: true, Errors: 160, Fallbacks: 160}}, totals(g.Stores()))
}

// TestStoreBreakerOpensAndProbes: defaultStoreTrip consecutive failures open
// the breaker; the store is then left alone for the backoff, after which
// one request at a time probes it: a failed probe leaves it open for
// another backoff, a successful one closes it.
func TestStoreBreakerOpensAndProbes(t *testing.T) {
	s := newScripted(t)
	fc := clock.NewFake(time.Hour)
	const backoff = 300 * time.Millisecond
	g := breakerGuard(t, s, fc, core.WithStoreBreaker(0, backoff))
	s.fail.Store(true)
	for i := range core.DefaultStoreTrip - 1 {
		enterX(t, g)
		assert.True(t, g.Stores()[0].Healthy, "after %d failures", i+1)
	}
	enterX(t, g)
	assert.Equal(t, []core.StoreStatus{{Name: "shared", Healthy: false, Errors: core.DefaultStoreTrip, Fallbacks: core.DefaultStoreTrip}}, totals(g.Stores()))
	calls := s.calls.Load()
	for range 10 {
		fc.Advance(backoff / 20)
		enterX(t, g)
	}
	assert.Equal(t, calls, s.calls.Load(), "no call while the breaker is open")

	// The backoff has passed: one probe, held in the store; requests
	// meanwhile are the policy's without calling the store.
	fc.Advance(backoff / 2)
	s.hold.Store(true)
	var wg sync.WaitGroup
	wg.Go(func() { enterX(t, g) })
	require.Eventually(t, func() bool { return s.waiting.Load() == 1 }, 5*time.Second, time.Millisecond)
	for range 10 {
		assert.False(t, enterX(t, g))
	}
	fc.Advance(2 * backoff) // even long after: one probe at a time
	assert.False(t, enterX(t, g))
	assert.Equal(t, calls+1, s.calls.Load(), "one probe")
	s.hold.Store(false)
	close(s.release)
	wg.Wait()
	assert.False(t, g.Stores()[0].Healthy, "the probe failed")

	// The failed probe claimed the breaker for a backoff from its start.
	assert.False(t, enterX(t, g))
	assert.Equal(t, calls+2, s.calls.Load(), "the next probe")
	s.fail.Store(false)
	fc.Advance(backoff)
	assert.True(t, enterX(t, g), "the probe succeeds")
	assert.True(t, g.Stores()[0].Healthy)
	for range 5 {
		assert.True(t, enterX(t, g))
	}
}

// TestStoreOverlappingFailuresCountOnce: calls in flight together that all
// fail (a stall of the host or of the store times them out at once) count
// as one failure toward the breaker, so they never open it on their own;
// defaultStoreTrip such rounds in a row do.
func TestStoreOverlappingFailuresCountOnce(t *testing.T) {
	s := newScripted(t)
	fc := clock.NewFake(time.Hour)
	g := breakerGuard(t, s, fc)
	const inFlight = 16
	round := func() {
		s.hold.Store(true)
		s.fail.Store(true)
		var wg sync.WaitGroup
		for range inFlight {
			wg.Go(func() { assert.False(t, enterX(t, g)) })
		}
		require.Eventually(t, func() bool { return s.waiting.Load() == inFlight }, 5*time.Second, time.Millisecond)
		s.hold.Store(false)
		for range inFlight {
			s.release <- struct{}{}
		}
		wg.Wait()
	}
	for i := range core.DefaultStoreTrip - 1 {
		round()
		assert.True(t, g.Stores()[0].Healthy, "after %d rounds of %d failures", i+1, inFlight)
	}
	s.fail.Store(false)
	assert.True(t, enterX(t, g))
	// A success ended the streak: defaultStoreTrip-1 rounds again do not
	// open it, one more does.
	for range core.DefaultStoreTrip - 1 {
		round()
	}
	assert.True(t, g.Stores()[0].Healthy)
	round()
	st := g.Stores()[0]
	assert.False(t, st.Healthy)
	assert.Equal(t, int64((2*core.DefaultStoreTrip-1)*inFlight), st.Errors)
}

// TestStoreClosedPolicyHint: a request that the closed policy rejects is
// told to retry after the backoff when its own call failed, and after the
// time left until the probe while the breaker is open.
func TestStoreClosedPolicyHint(t *testing.T) {
	s := newScripted(t)
	fc := clock.NewFake(time.Hour)
	g, err := core.New(core.WithClock(fc), core.WithStore("shared", s), core.WithStoreBreaker(2, time.Second),
		core.WithRules(core.Rule{Name: "r", Resource: "x", Kind: core.KindFlow, Limit: 10, Store: "shared", OnFailure: core.FailClosed}))
	require.NoError(t, err)
	s.fail.Store(true)
	hint := func() time.Duration {
		_, err := g.Enter(context.Background(), "x")
		var b *core.BlockedError
		require.True(t, errors.As(err, &b))
		assert.True(t, b.Fallback)
		return b.RetryAfter
	}
	assert.Equal(t, time.Second, hint(), "one failure")
	assert.Equal(t, time.Second, hint(), "the failure that opens the breaker")
	fc.Advance(300 * time.Millisecond)
	assert.Equal(t, 700*time.Millisecond, hint(), "until the probe")
}

// TestStoreProbeGivenUp: a probe whose caller gave up is not the store's
// failure: the next request probes at once.
func TestStoreProbeGivenUp(t *testing.T) {
	s := newScripted(t)
	fc := clock.NewFake(time.Hour)
	g := breakerGuard(t, s, fc, core.WithStoreBreaker(1, 0))
	s.fail.Store(true)
	enterX(t, g)
	require.False(t, g.Stores()[0].Healthy)
	fc.Advance(core.DefaultStoreBackoff)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := g.Enter(ctx, "x")
	require.ErrorIs(t, err, context.Canceled)
	calls := s.calls.Load()
	s.fail.Store(false)
	assert.True(t, enterX(t, g), "the next request probes, and closes the breaker")
	assert.Equal(t, calls+1, s.calls.Load())
	assert.Equal(t, []core.StoreStatus{{Name: "shared", Healthy: true, Errors: 1, Fallbacks: 1}}, totals(g.Stores()))
}
