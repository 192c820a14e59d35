package redisstore

import (
	"context"
	"errors"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core/clock"
	"github.com/sluicekit/sluice/core/store"
	"github.com/sluicekit/sluice/core/store/redisstore/internal/redistest"
	"github.com/sluicekit/sluice/core/store/storetest"
)

// slack is how far a Store's view of Redis's clock may run ahead of this
// process's clock over a test of the suite, which measures the time that
// passes between its calls: approximate mode's view moves forward by up to
// half a round trip when a tighter measure of the offset comes in.
const slack = 40 * time.Millisecond

// suiteTimeout is the Stores' timeout in the behaviour suites, which test
// decisions, not timeouts (the fault tests do): the default 50ms is
// shorter than a call can take when the machine runs every package's
// tests at once under -race, and so was 2s with the CPUs 7 times
// oversubscribed (ConcurrentTakesNeverExceed: context deadline exceeded).
const suiteTimeout = 10 * time.Second

// TestSuiteExact runs the suite with a client that honours contexts: a
// lone call runs on its caller's goroutine, concurrent ones are batched.
// (The cluster and Sentinel suites run with clients that do not.)
func TestSuiteExact(t *testing.T) {
	t.Parallel() // the suites mostly sleep
	srv := sharedServer(t)
	storetest.Run(t, func(t *testing.T) storetest.Harness {
		c := redis.NewClient(&redis.Options{Addr: srv.Addr, ContextTimeoutEnabled: true})
		t.Cleanup(func() { _ = c.Close() })
		st, err := New(c, WithPrefix(redistest.UniquePrefix()), WithTimeout(suiteTimeout))
		require.NoError(t, err)
		t.Cleanup(func() { _ = st.Close() })
		require.True(t, st.ctxOK)
		return storetest.Harness{Store: st, Sleep: time.Sleep, Slack: slack, Mode: store.Exact}
	})
}

func TestSuiteExactUnbatched(t *testing.T) {
	t.Parallel() // the suites mostly sleep
	srv := sharedServer(t)
	storetest.Run(t, func(t *testing.T) storetest.Harness {
		st, _ := newTestStore(t, srv, WithBatchSize(1), WithTimeout(suiteTimeout))
		return storetest.Harness{Store: st, Sleep: time.Sleep, Slack: slack, Mode: store.Exact}
	})
}

func TestSuiteApproximate(t *testing.T) {
	t.Parallel() // the suites mostly sleep
	srv := sharedServer(t)
	storetest.Run(t, func(t *testing.T) storetest.Harness {
		st, _ := newTestStore(t, srv, WithSyncPeriod(10*time.Millisecond), WithTimeout(suiteTimeout))
		return storetest.Harness{Store: st, Sleep: time.Sleep, Slack: slack, Mode: store.Approximate}
	})
}

func TestSuiteCluster(t *testing.T) {
	// A one-node Redis Cluster owning every slot: scripts touching keys of
	// two slots would fail with CROSSSLOT.
	t.Parallel()
	sharedServer(t)
	srv, ok := sharedCluster(t)
	if !ok {
		t.Skip("SLUICE_REDIS_ADDR and no redis-server on PATH: no cluster to test")
	}
	for _, mode := range []store.Mode{store.Exact, store.Approximate} {
		t.Run(string(mode), func(t *testing.T) {
			t.Parallel()
			storetest.Run(t, func(t *testing.T) storetest.Harness {
				c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{srv.Addr}})
				t.Cleanup(func() { _ = c.Close() })
				st, err := New(c, WithPrefix(redistest.UniquePrefix()), WithSyncPeriod(10*time.Millisecond), WithTimeout(suiteTimeout))
				require.NoError(t, err)
				t.Cleanup(func() { _ = st.Close() })
				return storetest.Harness{Store: st, Sleep: time.Sleep, Slack: slack, Mode: mode}
			})
		})
	}
}

// TestSuiteSentinel runs the suite through a Sentinel (failover) client.
func TestSuiteSentinel(t *testing.T) {
	t.Parallel()
	master := redistest.StartOwned(t)
	sentinel := redistest.StartSentinel(t, master) // skips without redis-server
	for _, mode := range []store.Mode{store.Exact, store.Approximate} {
		t.Run(string(mode), func(t *testing.T) {
			t.Parallel()
			storetest.Run(t, func(t *testing.T) storetest.Harness {
				c := redis.NewUniversalClient(&redis.UniversalOptions{MasterName: "main", Addrs: []string{sentinel.Addr}})
				t.Cleanup(func() { _ = c.Close() })
				st, err := New(c, WithPrefix(redistest.UniquePrefix()), WithSyncPeriod(10*time.Millisecond), WithTimeout(suiteTimeout))
				require.NoError(t, err)
				t.Cleanup(func() { _ = st.Close() })
				return storetest.Harness{Store: st, Sleep: time.Sleep, Slack: slack, Mode: mode}
			})
		})
	}
}

// sharedCluster returns the package's one-node cluster (miniredis without
// redis-server on PATH), or false when there is none to test.
func sharedCluster(t *testing.T) (*redistest.Server, bool) {
	t.Helper()
	return shared.Cluster(t)
}

func TestOptionsValidated(t *testing.T) {
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	defer c.Close()
	bad := []struct {
		opt  Option
		want string
	}{
		{WithPrefix(""), "WithPrefix"},
		{WithPrefix("a{b"), `"a{b"`},
		{WithPrefix(strings.Repeat("x", maxPrefixLen+1)), "WithPrefix"},
		{WithTimeout(0), "WithTimeout: must be > 0 and <= 1m, got 0s"},
		{WithTimeout(2 * time.Minute), "2m0s"},
		{WithIdleExpiry(time.Microsecond), "WithIdleExpiry: must be between 1ms and 24h, got 1µs"},
		{WithBatchSize(0), "WithBatchSize: must be between 1 and 10000, got 0"},
		{WithBatchSize(maxBatchSize + 1), "10001"},
		{WithSyncPeriod(0), "WithSyncPeriod: must be between 1ms and 1m0s, got 0s"},
		{WithMaxKeys(-1), "WithMaxKeys: must be between 1 and 16777216, got -1"},
		{WithMaxLag(-time.Millisecond), "WithMaxLag: must be between 0 and 1m0s, got -1ms"},
		{WithMaxLag(2 * time.Minute), "2m0s"},
		{nil, "option is nil"},
	}
	for _, b := range bad {
		st, err := New(c, b.opt)
		assert.Nil(t, st)
		if assert.Error(t, err) {
			assert.Contains(t, err.Error(), b.want)
		}
	}
	_, err := New(nil)
	assert.ErrorContains(t, err, "client is nil")
}

// TestMultiInstanceExact runs 3 Stores on one Redis with 30 goroutines
// against one limit each for its algorithm: exactly the limit is admitted
// (and, for the buckets, no more than their capacity plus the refill of the
// test's duration).
func TestMultiInstanceExact(t *testing.T) {
	srv := sharedServer(t)
	prefix := redistest.UniquePrefix()
	var stores []*Store
	for range 3 {
		c := srv.Client(t)
		st, err := New(c, WithPrefix(prefix), WithTimeout(time.Second))
		require.NoError(t, err)
		t.Cleanup(func() { _ = st.Close() })
		stores = append(stores, st)
	}
	cases := []struct {
		lim       store.Limit
		fixed     int64   // admitted regardless of time
		perSecond float64 // admitted per second of the test beyond fixed
	}{
		{store.Limit{Algorithm: store.SlidingCounter, Limit: 100, Window: time.Hour}, 100, 0},
		{store.Limit{Algorithm: store.TokenBucket, Limit: 60, Window: time.Minute, Burst: 40}, 100, 1},
		{store.Limit{Algorithm: store.LeakyBucket, Limit: 60, Window: time.Minute, MaxWait: 99 * time.Second}, 100, 1},
	}
	for _, tc := range cases {
		t.Run(string(tc.lim.Algorithm), func(t *testing.T) {
			key := "multi/" + string(tc.lim.Algorithm)
			var admitted, failed atomic.Int64
			var wg sync.WaitGroup
			start := time.Now()
			for g := range 30 {
				st := stores[g%3]
				wg.Go(func() {
					for range 20 {
						d, err := st.Take(context.Background(), key, tc.lim, 1)
						if err != nil {
							failed.Add(1)
						} else if d.OK {
							admitted.Add(1)
						}
					}
				})
			}
			wg.Wait()
			took := time.Since(start).Seconds()
			require.Zero(t, failed.Load())
			assert.GreaterOrEqual(t, admitted.Load(), tc.fixed, "600 requests against %d", tc.fixed)
			assert.LessOrEqual(t, admitted.Load(), tc.fixed+int64(tc.perSecond*took+1))
		})
	}
}

// TestBatching shows concurrent decisions sharing round trips (and, for
// one key, script calls), every one of them counted, and a lone decision
// costing one round trip.
func TestBatching(t *testing.T) {
	srv := sharedServer(t)
	c := srv.Client(t)
	h := &countHook{}
	c.AddHook(h)
	st, err := New(c, WithPrefix(redistest.UniquePrefix()), WithTimeout(time.Second))
	require.NoError(t, err)
	defer st.Close()
	ctx := context.Background()
	for _, alg := range []store.Algorithm{store.SlidingCounter, store.TokenBucket} {
		// The longest window: a token bucket refills 0.39 a second, a
		// few over a loaded machine's run, and every decision counts.
		lim := store.Limit{Algorithm: alg, Limit: 1000000, Window: maxWindow}
		_, err = st.Take(ctx, "warm", lim, 1) // loads the script
		require.NoError(t, err)

		h.reset()
		_, err = st.Take(ctx, "lone", lim, 1)
		require.NoError(t, err)
		assert.Equal(t, int64(1), h.pipelines.Load(), "a lone Take is one round trip")
		assert.Equal(t, int64(1), h.cmds.Load())

		h.reset()
		start := time.Now()
		var wg sync.WaitGroup
		for g := range 16 {
			wg.Go(func() {
				for i := range 50 {
					key := "many"
					if i%2 == 0 {
						key += itoa(int64(g % 4)) // and a few other keys
					}
					d, err := st.Take(ctx, key, lim, 1)
					assert.NoError(t, err)
					assert.True(t, d.OK)
				}
			})
		}
		wg.Wait()
		t.Logf("%s: 800 decisions in %d round trips, %d script calls", alg, h.pipelines.Load(), h.cmds.Load())
		assert.Less(t, h.pipelines.Load(), int64(800), "800 decisions from 16 goroutines share round trips")
		assert.Less(t, h.cmds.Load(), int64(800), "and script calls")
		d, err := st.Take(ctx, "many", lim, 1)
		require.NoError(t, err)
		// 401 taken, each once; a token bucket refilled meanwhile, for
		// as long as the decisions took.
		refill := int64(time.Since(start).Seconds()*float64(lim.Limit)/lim.Window.Seconds()) + 1
		if alg == store.SlidingCounter {
			refill = 0
		}
		assert.GreaterOrEqual(t, d.Remaining, int64(1000000-401), "%s: each decision counted once", alg)
		assert.LessOrEqual(t, d.Remaining, 1000000-401+refill, "%s: every decision counted", alg)
	}
}

type countHook struct{ pipelines, cmds atomic.Int64 }

func (h *countHook) reset() { h.pipelines.Store(0); h.cmds.Store(0) }

func (h *countHook) DialHook(next redis.DialHook) redis.DialHook { return next }

// count counts the script calls among cmds, and a round trip when there
// is one.
func (h *countHook) count(cmds ...redis.Cmder) {
	n := int64(0)
	for _, c := range cmds {
		if name := c.Name(); name == "evalsha" || name == "eval" {
			n++
		}
	}
	if n > 0 {
		h.pipelines.Add(1)
		h.cmds.Add(n)
	}
}

func (h *countHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.count(cmd)
		return next(ctx, cmd)
	}
}

func (h *countHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		h.count(cmds...)
		return next(ctx, cmds)
	}
}

// TestHashTags checks that every key of a limit carries the escaped key as
// its hash tag, so each script touches one Cluster slot, whatever the key.
func TestHashTags(t *testing.T) {
	srv := sharedServer(t)
	// Keys live a minute past their use: on a slow run, keys made at the
	// start must still be there when they are listed.
	st, c := newTestStore(t, srv, WithSyncPeriod(time.Millisecond), WithIdleExpiry(time.Minute), WithTimeout(suiteTimeout))
	ctx := context.Background()
	keys := []string{"plain", "a}b", "{x}", "", `back\slash`, "rule\x00value", strings.Repeat("k", 1000)}
	for _, key := range keys {
		for _, alg := range storeAlgorithms() {
			for _, mode := range []store.Mode{store.Exact, store.Approximate} {
				_, err := st.Take(ctx, key, store.Limit{Algorithm: alg, Limit: 10, Window: time.Second, Mode: mode}, 1)
				require.NoError(t, err)
			}
		}
	}
	// Two more syncs: the approximate entries replaced by the next
	// algorithm's are pushed.
	s0 := st.Stats().Syncs
	require.Eventually(t, func() bool {
		_, _ = st.Take(ctx, "plain", store.Limit{Algorithm: store.LeakyBucket, Limit: 10, Window: time.Second, Mode: store.Approximate}, 1)
		return st.Stats().Syncs >= s0+2
	}, 5*time.Second, time.Millisecond)
	all, err := c.Keys(ctx, st.o.prefix+":*").Result()
	require.NoError(t, err)
	// A node of a cluster (or miniredis) answers CLUSTER KEYSLOT.
	var slots *redis.Client
	if cl, ok := sharedCluster(t); ok {
		slots = redis.NewClient(&redis.Options{Addr: cl.Addr})
		defer slots.Close()
	}
	slotOf := map[string]int64{}
	byTag := map[string][]string{}
	for _, k := range all {
		if k == st.o.prefix+":{"+st.id+"}:alive" {
			continue // the Store's marker, not a limit's
		}
		tag := hashTag(k)
		require.NotEmpty(t, tag, "key %q has no hash tag", k)
		assert.NotContains(t, tag, "{")
		byTag[tag] = append(byTag[tag], k)
		if slots != nil { // the cluster's own hash slot of the key
			slot, err := slots.ClusterKeySlot(ctx, k).Result()
			require.NoError(t, err)
			tslot, err := slots.ClusterKeySlot(ctx, "{"+tag+"}").Result()
			require.NoError(t, err)
			assert.Equal(t, tslot, slot, "key %q", k)
			if prev, ok := slotOf[tag]; ok {
				assert.Equal(t, prev, slot, "keys of tag %q", tag)
			}
			slotOf[tag] = slot
		}
	}
	assert.Len(t, byTag, len(keys), "one tag per key: %v", byTag)
	for tag, ks := range byTag {
		// sc, tb, lb and the approximate sliding counter's windows.
		assert.GreaterOrEqual(t, len(ks), 4, "keys of tag %q: %v", tag, ks)
	}
	long := st.redisKey(strings.Repeat("k", 1000), "tb")
	assert.Less(t, len(long), 120, "a long key is hashed: %s", long)
}

// hashTag returns the hash tag of a Redis key as Redis Cluster finds it.
func hashTag(k string) string {
	i := strings.IndexByte(k, '{')
	if i < 0 {
		return ""
	}
	j := strings.IndexByte(k[i+1:], '}')
	if j <= 0 {
		return ""
	}
	return k[i+1 : i+1+j]
}

// TestNoscriptFallback flushes the script cache mid-run: decisions go on,
// batched and not.
func TestNoscriptFallback(t *testing.T) {
	srv := sharedServer(t)
	for _, batch := range []int{defaultBatchSize, 1} {
		st, c := newTestStore(t, srv, WithBatchSize(batch), WithTimeout(time.Second))
		ctx := context.Background()
		lim := store.Limit{Algorithm: store.SlidingCounter, Limit: 1000, Window: time.Minute}
		for i := range 20 {
			if i == 10 {
				require.NoError(t, c.ScriptFlush(ctx).Err())
				ok, err := c.ScriptExists(ctx, scriptSliding.Hash()).Result()
				require.NoError(t, err)
				require.False(t, ok[0], "flushed")
			}
			d, err := st.Take(ctx, "k", lim, 1)
			require.NoError(t, err, "batch %d, decision %d", batch, i)
			assert.Equal(t, int64(1000-i-1), d.Remaining)
		}
		ok, err := c.ScriptExists(ctx, scriptSliding.Hash()).Result()
		require.NoError(t, err)
		assert.True(t, ok[0], "the script is cached again")
		// Concurrent decisions in one pipeline all meet NOSCRIPT.
		require.NoError(t, c.ScriptFlush(ctx).Err())
		var wg sync.WaitGroup
		for range 16 {
			wg.Go(func() {
				_, err := st.Take(ctx, "k2", lim, 1)
				assert.NoError(t, err)
			})
		}
		wg.Wait()
	}
}

// TestKeysExpire checks that keys carry a TTL of about the time their state
// matters plus the idle expiry.
func TestKeysExpire(t *testing.T) {
	srv := sharedServer(t)
	st, c := newTestStore(t, srv, WithIdleExpiry(500*time.Millisecond), WithSyncPeriod(time.Millisecond))
	ctx := context.Background()
	w := 10 * time.Second
	t0 := time.Now()
	for _, alg := range storeAlgorithms() {
		lim := store.Limit{Algorithm: alg, Limit: 10, Window: w}
		if alg == store.LeakyBucket {
			lim.MaxWait = time.Second
		}
		_, err := st.Take(ctx, "ttl", lim, 1)
		require.NoError(t, err)
	}
	_, err := st.Take(ctx, "ttl", store.Limit{Algorithm: store.SlidingCounter, Limit: 10, Window: time.Minute, Mode: store.Approximate}, 1)
	require.NoError(t, err)
	ttl := func(suffix string) time.Duration {
		d, err := c.PTTL(ctx, st.redisKey("ttl", suffix)).Result()
		require.NoError(t, err)
		return d
	}
	// The approximate counter's key: its window's, or the previous one's
	// when the window just turned.
	approxTTL := func() time.Duration {
		idx := st.now() / int64(time.Minute)
		if d := ttl("asc:1m0s:" + itoa(idx)); d >= 0 {
			return d
		}
		return ttl("asc:1m0s:" + itoa(idx-1))
	}
	// A round under way when the Take counted may have pushed nothing (the
	// entry is made before it counts); a later one pushes the count.
	require.Eventually(t, func() bool { return approxTTL() >= 0 }, 5*time.Second, time.Millisecond)
	idle := 500 * time.Millisecond
	between := func(got, lo, hi time.Duration, what string) {
		assert.GreaterOrEqual(t, got, lo, what)
		assert.LessOrEqual(t, got, hi, what)
	}
	// A key's TTL has run down by at most the time since its Take, and
	// 50ms more: Redis sets an expiry from the time it cached when it
	// woke, which lags under load.
	elapsed := time.Since(t0) + 50*time.Millisecond
	between(ttl("sc:10s"), 2*w+idle-elapsed, 2*w+idle, "sliding counter: two windows")
	between(ttl("tb"), w/10+idle-elapsed, w/10+idle, "token bucket: one request's refill")
	between(ttl("lb"), w/10+idle-elapsed, w/10+idle, "leaky bucket: one slot")
	between(approxTTL(), idle, 2*time.Minute+idle, "approximate counter: until its window stops weighing")
}

func itoa(i int64) string { return strconv.FormatInt(i, 10) }

// TestCloseStopsGoroutines checks that Close stops every goroutine the
// Store started, and that calls after Close fail.
func TestCloseStopsGoroutines(t *testing.T) {
	srv := sharedServer(t)
	c := srv.Client(t)
	ctx := context.Background()
	st, err := New(c, WithPrefix(redistest.UniquePrefix()), WithSyncPeriod(time.Millisecond), WithTimeout(suiteTimeout))
	require.NoError(t, err)
	lim := store.Limit{Algorithm: store.SlidingCounter, Limit: 10, Window: time.Second}
	_, err = st.Take(ctx, "k", lim, 1)
	require.NoError(t, err)
	lim.Mode = store.Approximate
	_, err = st.Take(ctx, "k", lim, 1)
	require.NoError(t, err)
	assert.Equal(t, dispatchers+1, storeGoroutines(), "dispatchers and the sync loop")
	require.NoError(t, st.Close())
	require.NoError(t, st.Close(), "idempotent")
	assert.Zero(t, storeGoroutines(), "Close waits for its goroutines")
	assert.Zero(t, countStacks("coarse.(*Clock).run("), "and stops its coarse clock")
	_, err = st.Take(ctx, "k", lim, 1)
	assert.ErrorIs(t, err, errStoreClosed)
	assert.ErrorIs(t, err, store.ErrUnavailable)
	assert.ErrorIs(t, st.Undo(ctx, "k", lim, store.Decision{OK: true, Limit: 10}, 1), errStoreClosed)
}

// storeGoroutines counts the goroutines running a Store's loops (other
// tests of the package run one at a time: none runs in parallel).
func storeGoroutines() int {
	return countStacks("redisstore.(*Store).dispatch(") + countStacks("redisstore.(*Store).syncLoop(")
}

// countStacks counts the goroutines whose stack holds fn.
func countStacks(fn string) int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	return strings.Count(string(buf), fn)
}

// TestTakeHonoursContext checks that a caller's cancelled context ends a
// Take with an error that wraps the context's.
func TestTakeHonoursContext(t *testing.T) {
	srv := sharedServer(t)
	st, _ := newTestStore(t, srv)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := st.Take(ctx, "k", store.Limit{Algorithm: store.SlidingCounter, Limit: 1, Window: time.Second}, 1)
	assert.ErrorIs(t, err, context.Canceled)
	assert.ErrorIs(t, err, store.ErrUnavailable)
	_, err = st.Take(context.Background(), "k", store.Limit{Algorithm: store.SlidingCounter, Limit: 1, Window: time.Second}, 0)
	assert.ErrorContains(t, err, "n must be >= 1")
}

// TestNonsenseIsUnavailable puts a value of the wrong type under a limit's
// key: the store answers an error wrapping ErrUnavailable, not a panic.
func TestNonsenseIsUnavailable(t *testing.T) {
	srv := sharedServer(t)
	st, c := newTestStore(t, srv)
	ctx := context.Background()
	require.NoError(t, c.LPush(ctx, st.redisKey("k", "tb"), "x").Err())
	_, err := st.Take(ctx, "k", store.Limit{Algorithm: store.TokenBucket, Limit: 1, Window: time.Second}, 1)
	assert.ErrorIs(t, err, store.ErrUnavailable)
	// Garbage of the right type is read as no state.
	require.NoError(t, c.Set(ctx, st.redisKey("g", "tb"), "garbage", time.Minute).Err())
	d, err := st.Take(ctx, "g", store.Limit{Algorithm: store.TokenBucket, Limit: 1, Window: time.Second}, 1)
	require.NoError(t, err)
	assert.True(t, d.OK)
	assert.True(t, errors.Is(nonsense([]any{"x"}), store.ErrUnavailable))
}

// TestLeakyBucketUndoLeavesSlot documents that an exact leaky bucket's
// Undo does not give the slot back.
func TestLeakyBucketUndoLeavesSlot(t *testing.T) {
	srv := sharedServer(t)
	st, _ := newTestStore(t, srv)
	ctx := context.Background()
	lim := store.Limit{Algorithm: store.LeakyBucket, Limit: 1, Window: time.Minute}
	d, err := st.Take(ctx, "k", lim, 1)
	require.NoError(t, err)
	require.True(t, d.OK)
	require.NoError(t, st.Undo(ctx, "k", lim, d, 1))
	d, err = st.Take(ctx, "k", lim, 1)
	require.NoError(t, err)
	assert.False(t, d.OK)
}

// TestLimitsAsMemory checks that limits the memory store refuses are errors
// here too, in both modes: among them a bucket faster than one request per
// nanosecond, whose cost would round to nothing.
func TestLimitsAsMemory(t *testing.T) {
	srv := sharedServer(t)
	st, _ := newTestStore(t, srv)
	mem, err := store.NewMemory(clock.NewFake(0), 0)
	require.NoError(t, err)
	bad := []store.Limit{
		{Algorithm: store.TokenBucket, Limit: 2e9, Window: time.Second},
		{Algorithm: store.LeakyBucket, Limit: 2e9, Window: time.Second},
		{Algorithm: store.SlidingCounter, Limit: 1, Window: time.Second, Burst: 1},
		{Algorithm: store.TokenBucket, Limit: 1, Window: time.Second, MaxWait: time.Second},
		{Algorithm: store.Algorithm("fixed-window"), Limit: 1, Window: time.Second},
		{Algorithm: store.TokenBucket, Limit: 1, Window: time.Second, Mode: "eventual"},
	}
	for _, lim := range []store.Limit{
		{Algorithm: store.SlidingCounter, Limit: 1, Window: maxWindow + 1},
		{Algorithm: store.LeakyBucket, Limit: 1, Window: time.Second, MaxWait: 100 * 365 * 24 * time.Hour},
	} {
		for _, mode := range []store.Mode{store.Exact, store.Approximate} {
			lim.Mode = mode
			_, err := st.Take(context.Background(), "bad", lim, 1)
			assert.ErrorContains(t, err, "must be <= 720h0m0s", "%+v", lim)
		}
	}
	for _, lim := range bad {
		for _, mode := range []store.Mode{store.Exact, store.Approximate} {
			if lim.Mode == "" {
				lim.Mode = mode
			}
			_, merr := mem.Take(context.Background(), "bad", lim, 1)
			require.Error(t, merr, "%+v", lim)
			_, err := st.Take(context.Background(), "bad", lim, 1)
			assert.Error(t, err, "%+v", lim)
			assert.NotErrorIs(t, err, store.ErrUnavailable, "an invalid limit is not an outage")
		}
	}
}
