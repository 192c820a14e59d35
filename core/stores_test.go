package core_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/clock"
	"github.com/sluicekit/sluice/core/store"
)

// switchable is a memory store that the test can make fail, as a Redis that
// went away does, and that counts the calls it gets. The Redis store's own
// tests kill a real redis-server; this one tests the Guard's policies.
type switchable struct {
	store.Store
	down  atomic.Bool
	calls atomic.Int64
	keys  atomic.Pointer[[]string]
}

func (s *switchable) Take(ctx context.Context, key string, lim store.Limit, n int64) (store.Decision, error) {
	s.calls.Add(1)
	keys := append([]string(nil), s.seen()...)
	keys = append(keys, key)
	s.keys.Store(&keys)
	if s.down.Load() {
		return store.Decision{}, fmt.Errorf("switchable: %w", store.ErrUnavailable)
	}
	return s.Store.Take(ctx, key, lim, n)
}

func (s *switchable) seen() []string {
	if p := s.keys.Load(); p != nil {
		return *p
	}
	return nil
}

func newSwitchable(t *testing.T, c clock.Clock) *switchable {
	m, err := store.NewMemory(c, 0)
	require.NoError(t, err)
	return &switchable{Store: m}
}

// guardsOnStore returns n Guards, each on its own fake clock (set seconds
// apart: their clocks do not matter), sharing the store s as "shared".
func guardsOnStore(t *testing.T, n int, s store.Store, rules ...core.Rule) ([]*core.Guard, []*clock.Fake) {
	var gs []*core.Guard
	var fcs []*clock.Fake
	for i := range n {
		fc := clock.NewFake(time.Duration(1+i*3600) * time.Second)
		g, err := core.New(core.WithClock(fc), core.WithStore("shared", s), core.WithRules(rules...))
		require.NoError(t, err)
		gs = append(gs, g)
		fcs = append(fcs, fc)
	}
	return gs, fcs
}

func TestStoreRuleSharedAcrossGuardsWhateverTheirClocks(t *testing.T) {
	storeClock := clock.NewFake(0)
	s := newSwitchable(t, storeClock)
	gs, _ := guardsOnStore(t, 3, s, core.Rule{Name: "global", Resource: "GET /x", Kind: core.KindFlow, Limit: 5, Store: "shared"})
	ctx := context.Background()
	passed := 0
	for i := range 9 {
		e, err := gs[i%3].Enter(ctx, "GET /x")
		if err == nil {
			passed++
			e.Exit(nil)
			continue
		}
		b := blockedBy(t, err)
		assert.Equal(t, "global", b.Rule)
		assert.False(t, b.Fallback)
		assert.Equal(t, int64(5), b.Limit)
	}
	assert.Equal(t, 5, passed, "5 per second for the three Guards together")
	storeClock.Advance(2 * time.Second)
	_, err := gs[2].Enter(ctx, "GET /x")
	assert.NoError(t, err, "the store's clock moved on")
	assert.Equal(t, []core.StoreStatus{{Name: "shared", Healthy: true}}, totals(gs[0].Stores()))
}

func TestStoreFailurePolicies(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		policy     core.FailurePolicy
		wantPassed int // of 5 requests while the store is down
	}{
		{core.FailOpen, 5},
		{core.FailClosed, 0},
		{core.FailLocal, 2}, // localLimit
	} {
		t.Run(string(tt.policy), func(t *testing.T) {
			s := newSwitchable(t, clock.NewFake(0))
			fc := clock.NewFake(time.Second)
			// One failure opens the breaker: every request after it is
			// the policy's at once.
			g, err := core.New(core.WithClock(fc), core.WithStore("shared", s), core.WithStoreBreaker(1, 500*time.Millisecond),
				core.WithRules(core.Rule{Name: "r", Resource: "GET /x", Kind: core.KindFlow, Limit: 100, Store: "shared", OnFailure: tt.policy, LocalLimit: 2}))
			require.NoError(t, err)
			s.down.Store(true)
			passed := 0
			for range 5 {
				e, err := g.Enter(ctx, "GET /x")
				if err == nil {
					passed++
					e.Exit(nil)
					continue
				}
				b := blockedBy(t, err)
				assert.True(t, b.Fallback, "the policy's decision")
				assert.Equal(t, core.ReasonFallback, b.Reason())
				if tt.policy == core.FailClosed {
					assert.Equal(t, 500*time.Millisecond, b.RetryAfter, "until the store is tried again")
				}
			}
			assert.Equal(t, tt.wantPassed, passed)
			assert.Equal(t, int64(1), s.calls.Load(), "one failed call, then the store is left alone")
			assert.Equal(t, []core.StoreStatus{{Name: "shared", Healthy: false, Errors: 1, Fallbacks: 5}}, totals(g.Stores()))

			// After the backoff one request tries again; it fails, and
			// the store is left alone for another backoff.
			fc.Advance(500 * time.Millisecond)
			for range 3 {
				e, err := g.Enter(ctx, "GET /x")
				if err == nil {
					e.Exit(nil)
				}
			}
			assert.Equal(t, int64(2), s.calls.Load())

			// The store comes back: the next try succeeds and every
			// request goes to the store again.
			s.down.Store(false)
			fc.Advance(500 * time.Millisecond)
			for range 3 {
				e, err := g.Enter(ctx, "GET /x")
				require.NoError(t, err)
				e.Exit(nil)
			}
			assert.Equal(t, int64(5), s.calls.Load())
			st := g.Stores()[0]
			assert.True(t, st.Healthy)
			assert.Equal(t, int64(2), st.Errors)
		})
	}
}

func TestStoreHotspotSharedPerValue(t *testing.T) {
	s := newSwitchable(t, clock.NewFake(0))
	gs, _ := guardsOnStore(t, 2, s, core.Rule{
		Name: "per-user", Resource: "GET /items/{id}", Kind: core.KindHotspot, Param: "header:X-User-ID",
		Limit: 2, Store: "shared", Overrides: map[string]int64{"vip": 4, "banned": 0},
	})
	ctx := context.Background()
	enter := func(g *core.Guard, user string) error {
		e, err := g.Enter(ctx, "GET /items/{id}", core.WithParams(core.ParamMap{"header:X-User-ID": {user}}))
		e.Exit(nil)
		return err
	}
	for _, tt := range []struct {
		user   string
		passed int
	}{{"alice", 2}, {"bob", 2}, {"vip", 4}, {"banned", 0}, {strings.Repeat("x", 10000), 2}} {
		passed := 0
		for i := range 6 {
			if err := enter(gs[i%2], tt.user); err == nil {
				passed++
			} else {
				assert.Equal(t, "per-user", blockedBy(t, err).Rule)
			}
		}
		assert.Equal(t, tt.passed, passed, "user %.10s across two Guards", tt.user)
	}
	for _, k := range s.seen() {
		assert.LessOrEqual(t, len(k), 100, "store keys stay short: %.40q", k)
		assert.NotContains(t, k, "banned", "a value blocked by its override never reaches the store")
	}
}

func TestStoreReservationGivenBackWhenALaterRuleRejects(t *testing.T) {
	s := newSwitchable(t, clock.NewFake(0))
	gs, _ := guardsOnStore(t, 1, s,
		core.Rule{Name: "global", Resource: "GET /x", Kind: core.KindFlow, Limit: 2, Store: "shared", Algorithm: "token-bucket"},
		core.Rule{Name: "slow", Resource: "GET /x", Kind: core.KindFlow, Algorithm: "leaky-bucket", Limit: 0},
	)
	for range 5 {
		_, err := gs[0].Enter(context.Background(), "GET /x")
		assert.Equal(t, "slow", blockedBy(t, err).Rule)
	}
	d, err := s.Store.Take(context.Background(), "global", store.Limit{Algorithm: store.TokenBucket, Limit: 2, Window: time.Second, Mode: store.Exact}, 2)
	require.NoError(t, err)
	assert.True(t, d.OK, "the store's quota is whole")
}

// cancelling is a store whose calls last until ctx ends, as a slow store's
// do.
type cancelling struct{ store.Store }

func (cancelling) Take(ctx context.Context, key string, lim store.Limit, n int64) (store.Decision, error) {
	<-ctx.Done()
	return store.Decision{}, fmt.Errorf("cancelling: %w", ctx.Err())
}

func TestStoreCallEndedByTheCallerIsNotAStoreFailure(t *testing.T) {
	m, err := store.NewMemory(clock.NewFake(0), 0)
	require.NoError(t, err)
	g, err := core.New(core.WithClock(clock.NewFake(0)), core.WithStore("shared", cancelling{m}),
		core.WithRules(core.Rule{Resource: "x", Kind: core.KindFlow, Limit: 5, Store: "shared"}))
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = g.Enter(ctx, "x")
	require.ErrorIs(t, err, context.Canceled)
	assert.False(t, errors.Is(err, core.ErrBlocked))
	assert.Equal(t, []core.StoreStatus{{Name: "shared", Healthy: true}}, totals(g.Stores()))
}

// TestStoreRulesDefaults checks the defaults of a rule with a store, and
// the store options. (Package rulesfile checks the problems of a file.)
func TestStoreRulesDefaults(t *testing.T) {
	// A store the Guard does not have.
	rules, err := core.NormalizeRules([]core.Rule{{Resource: "x", Kind: core.KindFlow, Limit: 7, Store: "redis"}})
	require.NoError(t, err)
	assert.Equal(t, core.AlgorithmSlidingCounter, rules[0].Algorithm)
	assert.Equal(t, store.Exact, rules[0].Mode)
	assert.Equal(t, core.FailLocal, rules[0].OnFailure)
	assert.Equal(t, int64(7), rules[0].LocalLimit)
	_, err = core.New(core.WithRules(rules...))
	assert.ErrorContains(t, err, `store "redis" is not given to the Guard (core.WithStore)`)

	_, err = core.New(core.WithStore("", newSwitchable(t, clock.NewFake(0))))
	assert.ErrorContains(t, err, "WithStore: name must be")
	_, err = core.New(core.WithStore("a", nil))
	assert.ErrorContains(t, err, `WithStore("a"): store is nil`)
	_, err = core.New(core.WithStoreBreaker(0, -time.Second))
	assert.ErrorContains(t, err, "WithStoreBreaker: backoff must be > 0 (0: the default), got -1s")
	_, err = core.New(core.WithStoreBreaker(-1, 0))
	assert.ErrorContains(t, err, "WithStoreBreaker: trip must be between 1 and 1000 (0: the default), got -1")
	_, err = core.New(core.WithStoreBreaker(1001, 0))
	assert.ErrorContains(t, err, "WithStoreBreaker: trip must be between 1 and 1000 (0: the default), got 1001")
	_, err = core.New(core.WithStoreBreaker(0, 0))
	assert.NoError(t, err, "0 keeps the defaults")
}

// totals returns sts without their Modes: each store's totals.
func totals(sts []core.StoreStatus) []core.StoreStatus {
	for i := range sts {
		sts[i].Modes = nil
	}
	return sts
}

// TestStoreRuleAlgorithmDefaults: the default algorithm of a rule with a
// store, of each kind, is the one the store is asked for, and behaves as
// such ("100 per minute" as a hotspot token bucket let 104 through in 2.7s
// while the doc said sliding-counter). That the docs name these defaults
// is TestDocumentedDefaults' "store flow/hotspot algorithm" rows.
func TestStoreRuleAlgorithmDefaults(t *testing.T) {
	for _, tc := range []struct {
		kind  core.Kind
		want  core.Algorithm
		after int // admitted 6s after the first 100 of "100 per minute"
	}{
		{core.KindFlow, core.AlgorithmSlidingCounter, 0},
		{core.KindHotspot, core.AlgorithmTokenBucket, 10},
	} {
		r := core.Rule{Name: "r", Resource: "x", Kind: tc.kind, Limit: 100, Window: time.Minute, Store: "shared"}
		if tc.kind == core.KindHotspot {
			r.Param = "header:X-User"
		}
		rules, err := core.NormalizeRules([]core.Rule{r})
		require.NoError(t, err)
		assert.Equal(t, tc.want, rules[0].Algorithm, "%s", tc.kind)

		fc := clock.NewFake(0)
		s := newSwitchable(t, fc)
		g, err := core.New(core.WithClock(fc), core.WithStore("shared", s), core.WithRules(r))
		require.NoError(t, err)
		admit := func(n int) int {
			admitted := 0
			for range n {
				e, err := g.Enter(context.Background(), "x", core.WithParams(core.ParamMap{"header:X-User": {"alice"}}))
				if err == nil {
					admitted++
					e.Exit(nil)
				}
			}
			return admitted
		}
		assert.Equal(t, 100, admit(110), "%s: the limit at once", tc.kind)
		fc.Advance(6 * time.Second)
		assert.Equal(t, tc.after, admit(20), "%s: 6s later", tc.kind)
		assert.Equal(t, int64(130), s.calls.Load())
	}
}

// TestOneAlgorithmType: a rule's algorithm is a store's (core.Algorithm is
// store.Algorithm), not a second type converted at every boundary.
func TestOneAlgorithmType(t *testing.T) {
	lim := store.Limit{Algorithm: core.AlgorithmTokenBucket, Limit: 1, Window: time.Second}
	assert.NoError(t, lim.Validate())
	assert.Equal(t, store.SlidingCounter, core.AlgorithmSlidingCounter)
	assert.Equal(t, store.LeakyBucket, core.AlgorithmLeakyBucket)
	lim.Algorithm = core.AlgorithmLeapArray
	assert.ErrorContains(t, lim.Validate(), `algorithm must be sliding-counter, token-bucket or leaky-bucket with a store, got "leap-array"`)
}
