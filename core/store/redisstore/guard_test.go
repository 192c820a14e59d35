package redisstore_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/clock"
	"github.com/sluicekit/sluice/core/store/redisstore"
	"github.com/sluicekit/sluice/core/store/redisstore/internal/redistest"
)

// The tests of this file run Guards (package core) on the Redis store, as
// a service's instances would: each instance has its own client, Store and
// Guard, and they share one Redis and one key prefix.

// instance is one instance of a service.
type instance struct {
	g    *core.Guard
	st   *redisstore.Store
	hook *countHook // every command the instance's client sends
}

// newInstance returns an instance on srv whose Guard has the Store as
// "redis", closed when t ends. Its client honours contexts, as the README
// recommends.
func newInstance(t *testing.T, srv *redistest.Server, prefix string, storeOpts []redisstore.Option, guardOpts ...core.Option) instance {
	t.Helper()
	c := srv.Client(t, func(o *redis.Options) { o.ContextTimeoutEnabled = true })
	h := &countHook{}
	c.AddHook(h)
	st, err := redisstore.New(c, append([]redisstore.Option{redisstore.WithPrefix(prefix)}, storeOpts...)...)
	require.NoError(t, err)
	g, err := core.New(append([]core.Option{core.WithStore("redis", st)}, guardOpts...)...)
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = g.Close()
		_ = st.Close()
	})
	return instance{g: g, st: st, hook: h}
}

// patient are the Store options of the tests that keep Redis up: a
// timeout that a loaded machine's round trips never reach (1s was, the
// CPUs 7 times oversubscribed).
var patient = []redisstore.Option{redisstore.WithTimeout(10 * time.Second)}

// countHook counts the calls a client makes of the store's scripts (a
// pipeline counts once; not the handshake the client sends through its
// hooks on each new connection, which on a frozen Redis is the one after
// a call timed out), and, when within is set, the commands whose context
// has no deadline, or one further than within ahead: calls the store does
// not bound by its timeout.
type countHook struct {
	n         atomic.Int64
	within    time.Duration
	unbounded atomic.Int64
}

func (h *countHook) sent(ctx context.Context, cmds ...redis.Cmder) {
	for _, c := range cmds {
		if name := c.Name(); name == "evalsha" || name == "eval" {
			h.n.Add(1)
			break
		}
	}
	if h.within == 0 {
		return
	}
	if d, ok := ctx.Deadline(); !ok || time.Until(d) > h.within {
		h.unbounded.Add(1)
	}
}

func (h *countHook) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *countHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.sent(ctx, cmd)
		return next(ctx, cmd)
	}
}
func (h *countHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		h.sent(ctx, cmds...)
		return next(ctx, cmds)
	}
}

// blocked returns err as a *core.BlockedError, failing the test when it is
// another error.
func blocked(t *testing.T, err error) *core.BlockedError {
	t.Helper()
	var b *core.BlockedError
	require.True(t, errors.As(err, &b), "want a *core.BlockedError, got %v", err)
	return b
}

// tally counts the outcomes of Enters from many goroutines.
type tally struct {
	admitted, blocked atomic.Int64
	mu                sync.Mutex
	other             []error
	bad               []*core.BlockedError // blocks that are not the rule's, or by fallback
}

// enter enters resource on g, counts the outcome and reports whether it
// was admitted; a block must be rule's and not a failure policy's.
func (ty *tally) enter(g *core.Guard, resource, rule string, opts ...core.EnterOption) bool {
	e, err := g.Enter(context.Background(), resource, opts...)
	if err == nil {
		ty.admitted.Add(1)
		e.Exit(nil)
		return true
	}
	var b *core.BlockedError
	ty.mu.Lock()
	defer ty.mu.Unlock()
	switch {
	case !errors.As(err, &b):
		ty.other = append(ty.other, err)
	case b.Rule != rule || b.Fallback:
		ty.bad = append(ty.bad, b)
	default:
		ty.blocked.Add(1)
	}
	return false
}

func (ty *tally) check(t *testing.T) {
	t.Helper()
	assert.Empty(t, ty.other, "errors other than blocks")
	assert.Empty(t, ty.bad, "blocks by another rule, or by a failure policy")
}

// healthy checks that every instance's store worked throughout.
func healthy(t *testing.T, insts []instance) {
	t.Helper()
	for i, in := range insts {
		assert.Equal(t, []core.StoreStatus{{Name: "redis", Healthy: true}}, totals(in.g.Stores()), "instance %d", i)
	}
}

// TestGuardsShareExactLimit runs 3 instances, 30 goroutines entering one
// resource 600 times, against one exact limit: together they admit exactly
// the limit (a token bucket: its capacity, plus what it refills while the
// test runs). The windows are long, so that every request falls in one
// window of Redis's clock whatever the machine's load.
func TestGuardsShareExactLimit(t *testing.T) {
	srv := redisstore.SharedRedis(t)
	for _, tc := range []struct {
		rule      core.Rule
		fixed     int64   // admitted whatever the time
		perSecond float64 // refill per second of the test
	}{
		{core.Rule{Algorithm: "sliding-counter", Limit: 100, Window: time.Hour}, 100, 0},
		{core.Rule{Algorithm: "token-bucket", Limit: 60, Window: time.Minute, Burst: 40}, 100, 1},
	} {
		t.Run(string(tc.rule.Algorithm), func(t *testing.T) {
			rule := tc.rule
			rule.Name, rule.Resource, rule.Kind, rule.Store = "global", "GET /items", core.KindFlow, "redis"
			prefix := redistest.UniquePrefix()
			var insts []instance
			for range 3 {
				insts = append(insts, newInstance(t, srv, prefix, patient, core.WithRules(rule)))
			}
			var ty tally
			var wg sync.WaitGroup
			start := time.Now()
			for i := range 30 {
				g := insts[i%3].g
				wg.Go(func() {
					for range 20 {
						ty.enter(g, "GET /items", "global")
					}
				})
			}
			wg.Wait()
			took := time.Since(start)
			ty.check(t)
			t.Logf("%s: %d of 600 admitted in %s, %d blocked", rule.Algorithm, ty.admitted.Load(), took, ty.blocked.Load())
			assert.GreaterOrEqual(t, ty.admitted.Load(), tc.fixed, "exact: everything up to the limit is admitted")
			assert.LessOrEqual(t, ty.admitted.Load(), tc.fixed+int64(tc.perSecond*took.Seconds()+1), "and no more, over three instances")
			assert.Equal(t, int64(600), ty.admitted.Load()+ty.blocked.Load())
			healthy(t, insts)
		})
	}
}

// TestGuardsShareApproximateLimit runs 3 instances whose 30 goroutines
// offer 6x a limit in approximate mode, paced at 200 requests a second per
// instance, and checks the total against the bound doc.go documents:
// L + (N-1)*A(S), with S = G_i + G_j the sum of the two longest
// Stats.MaxSyncGap (plus how far apart the instances' views of Redis's
// clock are) and A(S) the most one instance admitted within a span of S,
// both measured: a loaded machine stretches S, and an instance whose
// goroutines ran late catches up in bursts. For a token bucket, L is its
// capacity plus its refill over the run.
func TestGuardsShareApproximateLimit(t *testing.T) {
	srv := redisstore.SharedRedis(t)
	const (
		n        = 3
		period   = 10 * time.Millisecond
		interval = 50 * time.Millisecond // 200 per second per instance
		run      = time.Second
	)
	for _, tc := range []struct {
		rule      core.Rule
		fixed     int64
		perSecond float64
	}{
		// One window of an hour: every request falls in it.
		{core.Rule{Algorithm: "sliding-counter", Limit: 100, Window: time.Hour}, 100, 0},
		{core.Rule{Algorithm: "token-bucket", Limit: 50, Window: time.Second, Burst: 10}, 60, 50},
	} {
		t.Run(string(tc.rule.Algorithm), func(t *testing.T) {
			rule := tc.rule
			rule.Name, rule.Resource, rule.Kind, rule.Store, rule.Mode = "global", "GET /items", core.KindFlow, "redis", "approximate"
			prefix := redistest.UniquePrefix()
			var insts []instance
			for range n {
				insts = append(insts, newInstance(t, srv, prefix, append([]redisstore.Option{redisstore.WithSyncPeriod(period)}, patient...), core.WithRules(rule)))
			}
			var ty tally
			spans := make([][][2]int64, n) // of each instance's admissions
			var mu sync.Mutex
			var wg sync.WaitGroup
			start := time.Now()
			end := start.Add(run)
			for i := range 10 * n {
				g := insts[i%n].g
				wg.Go(func() {
					next := time.Now()
					for time.Now().Before(end) {
						before := int64(time.Since(start))
						if ty.enter(g, "GET /items", "global") {
							mu.Lock()
							spans[i%n] = append(spans[i%n], [2]int64{before, int64(time.Since(start))})
							mu.Unlock()
						}
						next = next.Add(interval)
						time.Sleep(time.Until(next))
					}
				})
			}
			wg.Wait()
			took := time.Since(start)
			ty.check(t)
			var gaps []time.Duration
			var stores []*redisstore.Store
			for _, in := range insts {
				gaps = append(gaps, in.st.Stats().MaxSyncGap)
				stores = append(stores, in.st)
			}
			slices.Sort(gaps)
			spread := redisstore.ClockSpread(stores...)
			s := gaps[n-1] + gaps[n-2] + spread
			var a int64
			for _, sp := range spans {
				a = max(a, redisstore.MostWithin(sp, s))
			}
			allowed := tc.fixed + int64(tc.perSecond*(took+spread).Seconds()+1)
			bound := allowed + (n-1)*a
			t.Logf("%s: %d admitted in %s (exact: %d; S = %s, A(S) = %d, bound %d), %d blocked", rule.Algorithm, ty.admitted.Load(), took, allowed, s, a, bound, ty.blocked.Load())
			assert.LessOrEqual(t, ty.admitted.Load(), bound)
			// (A loaded machine may offer fewer than the limit in the run.)
			assert.GreaterOrEqual(t, ty.admitted.Load(), min(tc.fixed, ty.admitted.Load()+ty.blocked.Load()), "no instance blocks before the limit is reached")
			healthy(t, insts)
			for _, in := range insts {
				assert.NoError(t, in.st.Err())
			}
		})
	}
}

// TestGuardsShareHotspotLimits shares per-value limits, overrides
// included, between 3 instances.
func TestGuardsShareHotspotLimits(t *testing.T) {
	srv := redisstore.SharedRedis(t)
	rule := core.Rule{
		Name: "per-user", Resource: "GET /items/{id}", Kind: core.KindHotspot, Param: "header:X-User-ID",
		Limit: 5, Window: time.Hour, Store: "redis", Overrides: map[string]int64{"vip": 12, "banned": 0},
	}
	prefix := redistest.UniquePrefix()
	var insts []instance
	for range 3 {
		insts = append(insts, newInstance(t, srv, prefix, patient, core.WithRules(rule)))
	}
	long := strings.Repeat("u", 300) // stored under a hash of the value
	users := []string{"alice", "bob", "vip", "banned", long}
	tallies := map[string]*tally{}
	for _, u := range users {
		tallies[u] = &tally{}
	}
	var wg sync.WaitGroup
	for i := range 30 {
		g := insts[i%3].g
		wg.Go(func() {
			for j := range 20 {
				u := users[(i+j)%len(users)]
				tallies[u].enter(g, "GET /items/{id}", "per-user", core.WithParams(core.ParamMap{"header:X-User-ID": {u}}))
			}
		})
	}
	wg.Wait()
	want := map[string]int64{"alice": 5, "bob": 5, "vip": 12, "banned": 0, long: 5}
	for _, u := range users {
		tallies[u].check(t)
		assert.Equal(t, want[u], tallies[u].admitted.Load(), "user %.10s, of %d requests, over three instances", u, tallies[u].admitted.Load()+tallies[u].blocked.Load())
	}
	healthy(t, insts)
}

// TestGuardsClockSkew runs 3 instances on fake clocks hours apart: an
// exact limit is decided on Redis's clock, so they still share it, and
// moving their clocks (forwards or back) changes nothing.
func TestGuardsClockSkew(t *testing.T) {
	srv := redisstore.SharedRedis(t)
	for _, alg := range []core.Algorithm{core.AlgorithmSlidingCounter, core.AlgorithmTokenBucket, core.AlgorithmLeakyBucket} {
		t.Run(string(alg), func(t *testing.T) {
			rule := core.Rule{Name: "global", Resource: "GET /x", Kind: core.KindFlow, Algorithm: alg, Limit: 10, Window: time.Hour, Store: "redis"}
			if alg == "leaky-bucket" {
				rule.MaxWait = 0 // a request whose turn is not now is rejected
				rule.Limit = 1
			}
			prefix := redistest.UniquePrefix()
			var insts []instance
			var clocks []*clock.Fake
			for _, start := range []time.Duration{time.Second, 7 * time.Second, 3 * time.Hour} {
				fc := clock.NewFake(start)
				clocks = append(clocks, fc)
				insts = append(insts, newInstance(t, srv, prefix, patient, core.WithClock(fc), core.WithRules(rule)))
			}
			admitted := 0
			enter := func(i int) {
				e, err := insts[i%3].g.Enter(context.Background(), "GET /x")
				if err == nil {
					admitted++
					e.Exit(nil)
					return
				}
				b := blocked(t, err)
				assert.Equal(t, "global", b.Rule)
				assert.False(t, b.Fallback)
				// On Redis's clock: up to two windows for a sliding
				// counter, whose previous window still weighs.
				assert.Positive(t, b.RetryAfter)
				assert.LessOrEqual(t, b.RetryAfter, 2*time.Hour)
			}
			for i := range 30 {
				enter(i)
			}
			assert.Equal(t, int(rule.Limit), admitted, "one limit for the three instances")
			// Their clocks jump: hours ahead, and back.
			clocks[0].Advance(2 * time.Hour)
			clocks[1].Advance(24 * time.Hour)
			clocks[2].Set(time.Hour)
			for i := range 9 {
				enter(i)
			}
			assert.Equal(t, int(rule.Limit), admitted, "instances' clocks do not refill a shared limit")
			healthy(t, insts)
		})
	}
}

// TestGuardRedisKilled kills the redis-server mid-run, for each failure
// policy: the first trip requests that meet the outage each pay a failed
// call and are decided by the policy; then the breaker opens and the rest
// are decided by the policy at once, without calling Redis, until the
// backoff has passed (on the Guard's fake clock), when one request tries
// again. BlockedError.Fallback and Guard.Stores show it. Once
// redis-server is back on the same port, the Guard returns to it by
// itself.
func TestGuardRedisKilled(t *testing.T) {
	srv := redistest.StartOwned(t)
	const (
		timeout = 200 * time.Millisecond
		backoff = time.Second
		trip    = 3
	)
	for _, tc := range []struct {
		policy     core.FailurePolicy
		flowPassed int // of 10 requests during the outage
		userPassed int // of 4 requests of one user
	}{
		{core.FailOpen, 10, 4},
		{core.FailClosed, 0, 0},
		{core.FailLocal, 3, 2}, // the localLimit of each rule
	} {
		t.Run(string(tc.policy), func(t *testing.T) {
			fc := clock.NewFake(time.Hour)
			rules := []core.Rule{
				{Name: "global", Resource: "GET /x", Kind: core.KindFlow, Limit: 1000, Window: time.Hour,
					Store: "redis", OnFailure: tc.policy, LocalLimit: 3},
				{Name: "per-user", Resource: "GET /u", Kind: core.KindHotspot, Param: "header:X-User-ID", Limit: 100, Window: time.Hour,
					Store: "redis", OnFailure: tc.policy, LocalLimit: 2},
			}
			in := newInstance(t, srv, redistest.UniquePrefix(), []redisstore.Option{redisstore.WithTimeout(timeout)},
				core.WithClock(fc), core.WithStoreBreaker(trip, backoff), core.WithRules(rules...))
			ctx := context.Background()
			enter := func(resource, user string) (time.Duration, error) {
				start := time.Now()
				e, err := in.g.Enter(ctx, resource, core.WithParams(core.ParamMap{"header:X-User-ID": {user}}))
				took := time.Since(start)
				e.Exit(nil)
				return took, err
			}
			for range 3 {
				_, err := enter("GET /x", "alice")
				require.NoError(t, err, "Redis is up")
			}
			require.Equal(t, []core.StoreStatus{{Name: "redis", Healthy: true}}, totals(in.g.Stores()))

			srv.Kill()
			calls := in.hook.n.Load()
			var worst time.Duration
			passed := 0
			for i := range 10 {
				took, err := enter("GET /x", "alice")
				worst = max(worst, took)
				if i < trip {
					assert.Greater(t, in.hook.n.Load(), calls, "request %d tries Redis", i)
					assert.Equal(t, i == trip-1, !in.g.Stores()[0].Healthy, "the breaker opens after %d failures", trip)
					calls = in.hook.n.Load()
				}
				if err == nil {
					passed++
					continue
				}
				b := blocked(t, err)
				assert.True(t, b.Fallback, "the policy's decision")
				assert.Equal(t, "global", b.Rule)
				switch tc.policy {
				case core.FailClosed:
					assert.Equal(t, backoff, b.RetryAfter, "until Redis is tried again (or, before the breaker opens, the backoff)")
				case core.FailLocal:
					assert.Equal(t, int64(3), b.Limit, "the local limit")
				}
			}
			assert.Equal(t, tc.flowPassed, passed, "GET /x while Redis is down")
			usersPassed := map[string]int{}
			for _, user := range []string{"alice", "bob", "alice", "bob", "alice", "bob", "alice", "bob"} {
				took, err := enter("GET /u", user)
				worst = max(worst, took)
				if err == nil {
					usersPassed[user]++
					continue
				}
				b := blocked(t, err)
				assert.True(t, b.Fallback)
				assert.Equal(t, "per-user", b.Rule)
				assert.Equal(t, "header:X-User-ID", b.Param)
			}
			assert.Equal(t, map[string]int{"alice": tc.userPassed, "bob": tc.userPassed}, withZeros(usersPassed, "alice", "bob"), "GET /u per user while Redis is down")
			assert.Equal(t, calls, in.hook.n.Load(), "no call to Redis within the backoff")
			assert.Equal(t, []core.StoreStatus{{Name: "redis", Healthy: false, Errors: trip, Fallbacks: 18}}, totals(in.g.Stores()))
			t.Logf("%s: slowest Enter while Redis is down: %s (store timeout %s)", tc.policy, worst, timeout)
			assert.Zero(t, in.hook.unbounded.Load(), "every call to Redis is bounded by the store's timeout plus its lag allowance")

			// After the backoff one request tries Redis again, and fails.
			fc.Advance(backoff)
			for range 3 {
				_, _ = enter("GET /x", "alice")
			}
			assert.Greater(t, in.hook.n.Load(), calls, "one request tried again")
			st := in.g.Stores()[0]
			assert.False(t, st.Healthy)
			assert.Equal(t, int64(trip+1), st.Errors)

			// redis-server comes back on the same port: the next try
			// succeeds and the Guard uses Redis again.
			srv.Restart(t)
			deadline := time.Now().Add(10 * time.Second)
			for !in.g.Stores()[0].Healthy {
				require.True(t, time.Now().Before(deadline), "the Guard goes back to Redis")
				fc.Advance(backoff)
				_, _ = enter("GET /x", "alice")
				time.Sleep(5 * time.Millisecond)
			}
			fallbacks := in.g.Stores()[0].Fallbacks
			calls = in.hook.n.Load()
			for range 3 {
				_, err := enter("GET /x", "alice")
				require.NoError(t, err)
				_, err = enter("GET /u", "alice")
				require.NoError(t, err)
			}
			assert.Equal(t, fallbacks, in.g.Stores()[0].Fallbacks, "decided by Redis again")
			assert.GreaterOrEqual(t, in.hook.n.Load(), calls+6)
		})
	}
}

func withZeros(m map[string]int, keys ...string) map[string]int {
	for _, k := range keys {
		m[k] += 0
	}
	return m
}

// TestGuardRedisDownLatency keeps Redis down (killed, or frozen so that
// only the store's timeout ends a call) under 4 goroutines of requests, on
// the system clock and a breaker that trips after 5 rounds. It checks what
// the Guard does, not how long the loaded machine took: before the breaker
// opens, each goroutine makes at most one call per round (trip rounds, and
// the next one's start);
// once it is open, 200 requests per goroutine make at most one call per
// backoff of the time they took (the probes), so the others cannot wait
// for Redis; and every call to Redis carries a deadline no further than
// the store's timeout.
func TestGuardRedisDownLatency(t *testing.T) {
	srv := redistest.StartOwned(t)
	const (
		timeout    = 100 * time.Millisecond
		backoff    = 300 * time.Millisecond
		trip       = 5
		maxLag     = time.Second
		goroutines = 4
		after      = 200 // requests per goroutine once the breaker is open
	)
	for _, how := range []string{"killed", "frozen"} {
		t.Run(how, func(t *testing.T) {
			if how == "frozen" && !srv.Real() {
				t.Skip("miniredis cannot be frozen")
			}
			rule := core.Rule{Name: "global", Resource: "GET /x", Kind: core.KindFlow, Limit: 1 << 40, Window: time.Hour,
				Store: "redis", OnFailure: core.FailOpen}
			in := newInstance(t, srv, redistest.UniquePrefix(), []redisstore.Option{redisstore.WithTimeout(timeout), redisstore.WithMaxLag(maxLag)},
				core.WithStoreBreaker(trip, backoff), core.WithRules(rule))
			in.hook.within = timeout + maxLag
			ctx := context.Background()
			e, err := in.g.Enter(ctx, "GET /x")
			require.NoError(t, err)
			e.Exit(nil)
			// On a loaded machine that Enter may have timed out (Redis up,
			// and waiting for a CPU): fail open counted it.
			fallbacks := in.g.Stores()[0].Fallbacks

			var requests atomic.Int64
			var mu sync.Mutex
			var worst time.Duration
			enter := func() bool {
				t0 := time.Now()
				e, err := in.g.Enter(ctx, "GET /x")
				took := time.Since(t0)
				if err != nil {
					t.Errorf("fail open admits: %v", err)
					return false
				}
				e.Exit(nil)
				requests.Add(1)
				mu.Lock()
				worst = max(worst, took)
				mu.Unlock()
				return true
			}
			if how == "killed" {
				srv.Kill()
			} else {
				srv.Freeze(t)
			}
			var wg sync.WaitGroup
			deadline := time.Now().Add(30 * time.Second)
			for range goroutines {
				wg.Go(func() {
					for in.g.Stores()[0].Healthy && time.Now().Before(deadline) && enter() {
					}
				})
			}
			wg.Wait()
			require.False(t, in.g.Stores()[0].Healthy, "the breaker opens")
			opened := in.g.Stores()[0].Errors
			// One call per goroutine per round; calls of the round after
			// the last may start before the breaker is marked open.
			assert.LessOrEqual(t, opened, int64(goroutines*(trip+1)), "one call per goroutine per round until the breaker opens")
			assert.GreaterOrEqual(t, opened, int64(trip))

			probes := in.hook.n.Load()
			start := time.Now()
			for range goroutines {
				wg.Go(func() {
					for range after {
						if !enter() {
							return
						}
					}
				})
			}
			wg.Wait()
			took := time.Since(start)
			probes = in.hook.n.Load() - probes
			st := in.g.Stores()[0]
			t.Logf("%s: %d failed calls opened the breaker; then %d requests in %s made %d calls; slowest Enter %s (timeout %s)",
				how, opened, goroutines*after, took, probes, worst, timeout)
			assert.LessOrEqual(t, probes, int64(took/backoff)+1, "one probe per backoff")
			assert.Equal(t, requests.Load(), st.Fallbacks-fallbacks, "every request during the outage was the policy's")
			assert.Zero(t, in.hook.unbounded.Load(), "every call to Redis is bounded by the store's timeout plus its lag allowance")

			if how == "killed" {
				srv.Restart(t)
			} else {
				srv.Thaw(t)
			}
			require.Eventually(t, func() bool {
				e, err := in.g.Enter(ctx, "GET /x")
				e.Exit(nil)
				return err == nil && in.g.Stores()[0].Healthy
			}, 10*time.Second, 5*time.Millisecond, "the Guard goes back to Redis by itself")
		})
	}
}

// totals returns sts without their Modes: each store's totals.
func totals(sts []core.StoreStatus) []core.StoreStatus {
	for i := range sts {
		sts[i].Modes = nil
	}
	return sts
}
