package redisstore

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core/store"
	"github.com/sluicekit/sluice/core/store/redisstore/internal/redistest"
	"github.com/sluicekit/sluice/core/stripe"
)

// pacedRun runs 10 goroutines per store, each taking from key under lim
// once per interval (so that one instance offers at most 10/interval
// requests per second), for d. It returns the admitted requests per store
// and per window index of the store's clock.
func pacedRun(t *testing.T, stores []*Store, key string, lim store.Limit, interval, d time.Duration) (perWindow map[int64]int64, total int64) {
	var mu sync.Mutex
	perWindow = map[int64]int64{}
	var failed atomic.Int64
	var wg sync.WaitGroup
	end := time.Now().Add(d)
	for _, st := range stores {
		for range 10 {
			wg.Go(func() {
				next := time.Now()
				for time.Now().Before(end) {
					now := st.now()
					dec, err := st.Take(context.Background(), key, lim, 1)
					if err != nil {
						failed.Add(1)
					} else if dec.OK {
						mu.Lock()
						perWindow[now/int64(lim.Window)]++
						total++
						mu.Unlock()
					}
					next = next.Add(interval)
					time.Sleep(time.Until(next))
				}
			})
		}
	}
	wg.Wait()
	for i, st := range stores {
		t.Logf("store %d: %+v", i, st.Stats())
	}
	require.Zero(t, failed.Load())
	return perWindow, total
}

// syncSpan is S, the span in which one Store's admissions may go unseen by
// another: 2*period plus 100ms for the round trip and scheduling delays,
// or, when the host ran later than that, twice the longest sync gap a
// Store saw (its admissions reach Redis within its MaxSyncGap, the other's
// read within that one's).
func syncSpan(stores []*Store, period time.Duration) time.Duration {
	s := 2*period + 100*time.Millisecond
	for _, st := range stores {
		s = max(s, 2*st.Stats().MaxSyncGap)
	}
	return s
}

// TestApproxMultiInstanceBound runs 3 Stores on one Redis, 30 goroutines
// offering 6x the limit, and checks every window against the documented
// bound: L + (N-1)*A(S), where A(S) is the most one instance admits in
// S (syncSpan: what two sync gaps may leave unseen). Pacing bounds A(S) by
// the offered rate: 10 goroutines, each at most one request per interval,
// admit at most 10*(S/interval+1) in any span S.
func TestApproxMultiInstanceBound(t *testing.T) {
	srv := sharedServer(t)
	prefix := redistest.UniquePrefix()
	const (
		n        = 3
		limit    = 100
		period   = 10 * time.Millisecond
		interval = 50 * time.Millisecond // 200 per second per instance
	)
	var stores []*Store
	for range n {
		st, err := New(srv.Client(t), WithPrefix(prefix), WithSyncPeriod(period), WithTimeout(time.Second))
		require.NoError(t, err)
		t.Cleanup(func() { _ = st.Close() })
		stores = append(stores, st)
	}
	lim := store.Limit{Algorithm: store.SlidingCounter, Limit: limit, Window: time.Second, Mode: store.Approximate}
	perWindow, _ := pacedRun(t, stores, "approx-bound", lim, interval, 2600*time.Millisecond)

	s := syncSpan(stores, period)
	a := int64(10 * (s/interval + 1))
	bound := int64(limit) + (n-1)*a
	var first, last int64 = 1 << 62, 0
	for idx := range perWindow {
		first, last = min(first, idx), max(last, idx)
	}
	full := 0
	for idx := first + 1; idx < last; idx++ { // whole windows only
		full++
		got := perWindow[idx]
		t.Logf("window %d: %d admitted (limit %d, bound %d, %d offered)", idx, got, limit, bound, n*10*int64(time.Second/interval))
		assert.LessOrEqual(t, got, bound, "window %d", idx)
		assert.GreaterOrEqual(t, got, int64(limit/2), "window %d: the limit admits, it does not starve", idx)
	}
	assert.GreaterOrEqual(t, full, 1)
}

// TestApproxBucketMultiInstance does the same for a token bucket: over the
// run, the admitted requests exceed the bucket's capacity plus its refill by
// at most (N-1)*A(S).
func TestApproxBucketMultiInstance(t *testing.T) {
	srv := sharedServer(t)
	prefix := redistest.UniquePrefix()
	const (
		n        = 3
		period   = 10 * time.Millisecond
		interval = 50 * time.Millisecond
		run      = 1500 * time.Millisecond
	)
	var stores []*Store
	for range n {
		st, err := New(srv.Client(t), WithPrefix(prefix), WithSyncPeriod(period), WithTimeout(time.Second))
		require.NoError(t, err)
		t.Cleanup(func() { _ = st.Close() })
		stores = append(stores, st)
	}
	lim := store.Limit{Algorithm: store.TokenBucket, Limit: 50, Window: time.Second, Burst: 10, Mode: store.Approximate}
	start := time.Now()
	_, total := pacedRun(t, stores, "approx-bucket", lim, interval, run)
	took := time.Since(start)
	s := syncSpan(stores, period)
	a := int64(10 * (s/interval + 1))
	allowed := 60 + int64(took.Seconds()*50) + 1
	t.Logf("%d admitted in %s: capacity and refill %d, bound %d, %d offered", total, took, allowed, allowed+(n-1)*a, int64(took.Seconds()*600))
	assert.LessOrEqual(t, total, allowed+(n-1)*a)
	assert.GreaterOrEqual(t, total, int64(60))
}

// TestApproxDecisionsAreLocal counts round trips: after a key's first read,
// approximate decisions make none (the sync is the only traffic).
func TestApproxDecisionsAreLocal(t *testing.T) {
	srv := sharedServer(t)
	c := srv.Client(t)
	h := &countHook{}
	c.AddHook(h)
	st, err := New(c, WithPrefix(redistest.UniquePrefix()), WithSyncPeriod(time.Minute), WithTimeout(suiteTimeout))
	require.NoError(t, err)
	defer st.Close()
	ctx := context.Background()
	for _, alg := range storeAlgorithms() {
		lim := store.Limit{Algorithm: alg, Limit: 1000000, Window: time.Second, Mode: store.Approximate}
		if alg == store.LeakyBucket {
			lim.MaxWait = time.Second
		}
		_, err := st.Take(ctx, "local/"+string(alg), lim, 1)
		require.NoError(t, err)
		before := h.pipelines.Load()
		for range 1000 {
			d, err := st.Take(ctx, "local/"+string(alg), lim, 1)
			require.NoError(t, err)
			require.True(t, d.OK)
		}
		assert.Equal(t, before, h.pipelines.Load(), "%s: 1000 decisions without a round trip", alg)
	}
}

func TestApproxAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	srv := sharedServer(t)
	st, _ := newTestStore(t, srv, WithSyncPeriod(time.Minute))
	ctx := context.Background()
	for _, alg := range storeAlgorithms() {
		lim := store.Limit{Algorithm: alg, Limit: 1e9, Window: time.Second, Mode: store.Approximate}
		key := "allocs/" + string(alg)
		_, err := st.Take(ctx, key, lim, 1)
		require.NoError(t, err)
		allocs := testing.AllocsPerRun(1000, func() { _, _ = st.Take(ctx, key, lim, 1) })
		assert.Zero(t, allocs, "%s", alg)
	}
}

// TestApproxMaxKeys bounds the tracked keys: the others are decided in
// Redis, on the same counts.
func TestApproxMaxKeys(t *testing.T) {
	srv := sharedServer(t)
	prefix := redistest.UniquePrefix()
	// A timeout a loaded machine's round trips do not reach: a first read
	// that timed out would leave b deciding on its own counts.
	a, err := New(srv.Client(t), WithPrefix(prefix), WithMaxKeys(2), WithSyncPeriod(5*time.Millisecond), WithTimeout(suiteTimeout))
	require.NoError(t, err)
	defer a.Close()
	b, err := New(srv.Client(t), WithPrefix(prefix), WithSyncPeriod(5*time.Millisecond), WithTimeout(suiteTimeout))
	require.NoError(t, err)
	defer b.Close()
	ctx := context.Background()
	require.NoError(t, b.fetchOffset(ctx))
	for _, alg := range []store.Algorithm{store.SlidingCounter, store.TokenBucket} {
		lim := store.Limit{Algorithm: alg, Limit: 4, Window: time.Minute, Mode: store.Approximate}
		for _, k := range []string{"k1", "k2"} {
			_, err := a.Take(ctx, string(alg)+k, lim, 1)
			require.NoError(t, err)
		}
		// a tracks k1 and k2 (of the first algorithm): k3 is decided in Redis.
		for i := range 2 {
			d, err := a.Take(ctx, string(alg)+"k3", lim, 1)
			require.NoError(t, err)
			assert.True(t, d.OK, "%s: request %d", alg, i)
		}
		// b tracks k3: its first read sees a's 2. (Once b's view of
		// Redis's clock, which lags it by up to half a round trip, has
		// passed the time of a's requests: it must not see a's TAT in its
		// future.)
		redisNow, err := srv.Client(t).Time(ctx).Result()
		require.NoError(t, err)
		require.Eventually(t, func() bool { return b.now() >= redisNow.UnixNano() }, 5*time.Second, time.Millisecond)
		for i := range 2 {
			d, err := b.Take(ctx, string(alg)+"k3", lim, 1)
			require.NoError(t, err)
			require.NoError(t, b.Err(), "%s: b's first read", alg)
			assert.True(t, d.OK, "%s: request %d on b", alg, i)
		}
		d, err := b.Take(ctx, string(alg)+"k3", lim, 1)
		require.NoError(t, err)
		assert.False(t, d.OK, "%s: the 5th of 4, on b", alg)
		// b's counts reach Redis.
		e := b.lookup(string(alg)+"k3", lim)
		require.NotNil(t, e)
		require.Eventually(t, func() bool { return b.Err() == nil && !e.hasPending() }, 5*time.Second, time.Millisecond)
		d, err = a.Take(ctx, string(alg)+"k3", lim, 1)
		require.NoError(t, err)
		assert.False(t, d.OK, "%s: the 5th of 4, on a, in Redis", alg)
	}
	assert.LessOrEqual(t, a.Stats().Tracked, int64(2))
}

// TestApproxForgetsIdleKeys checks that keys whose state no longer matters
// are dropped from the process.
func TestApproxForgetsIdleKeys(t *testing.T) {
	srv := sharedServer(t)
	st, _ := newTestStore(t, srv, WithIdleExpiry(time.Millisecond), WithSyncPeriod(5*time.Millisecond))
	ctx := context.Background()
	for i := range 20 {
		alg := storeAlgorithms()[i%len(storeAlgorithms())]
		// One request fills a bucket for the whole window: the state of
		// every key matters for 10s at least, longer than 20 first reads
		// take on a loaded machine (400ms was not, under -race beside
		// other tests; 2s was not, beside 4 busy loops).
		_, err := st.Take(ctx, "idle/"+itoa(int64(i)), store.Limit{Algorithm: alg, Limit: 1, Window: 10 * time.Second, Mode: store.Approximate}, 1)
		require.NoError(t, err)
	}
	assert.Equal(t, int64(20), st.Stats().Tracked)
	require.Eventually(t, func() bool { return st.Stats().Tracked == 0 }, 30*time.Second, 5*time.Millisecond)
}

// TestApproxLimitChange replaces a key's entry when its limit changes; the
// old entry's counts still reach Redis.
func TestApproxLimitChange(t *testing.T) {
	srv := sharedServer(t)
	prefix := redistest.UniquePrefix()
	a, err := New(srv.Client(t), WithPrefix(prefix), WithSyncPeriod(5*time.Millisecond), WithTimeout(suiteTimeout))
	require.NoError(t, err)
	defer a.Close()
	ctx := context.Background()
	lim := store.Limit{Algorithm: store.SlidingCounter, Limit: 10, Window: time.Minute, Mode: store.Approximate}
	for range 5 {
		_, err := a.Take(ctx, "change", lim, 1)
		require.NoError(t, err)
	}
	lim.Limit = 6
	d, err := a.Take(ctx, "change", lim, 1)
	require.NoError(t, err)
	assert.True(t, d.OK)
	require.Eventually(t, func() bool {
		b, err := New(srv.Client(t), WithPrefix(prefix), WithSyncPeriod(time.Minute), WithTimeout(suiteTimeout))
		require.NoError(t, err)
		defer b.Close()
		d, err := b.Take(ctx, "change", lim, 1)
		return err == nil && !d.OK // 5 + 1 of 6 are known in Redis
	}, 5*time.Second, 10*time.Millisecond)
}

func TestApproxUndo(t *testing.T) {
	srv := sharedServer(t)
	st, _ := newTestStore(t, srv, WithSyncPeriod(time.Minute))
	ctx := context.Background()
	lim := store.Limit{Algorithm: store.LeakyBucket, Limit: 10, Window: time.Second, MaxWait: time.Second, Mode: store.Approximate}
	d1, err := st.Take(ctx, "undo", lim, 1)
	require.NoError(t, err)
	d2, err := st.Take(ctx, "undo", lim, 1)
	require.NoError(t, err)
	require.True(t, d2.OK)
	assert.InDelta(t, float64(100*time.Millisecond), float64(d2.Wait-d1.Wait), float64(slack))
	require.NoError(t, st.Undo(ctx, "undo", lim, d2, 1))
	d3, err := st.Take(ctx, "undo", lim, 1)
	require.NoError(t, err)
	assert.InDelta(t, float64(d2.Wait), float64(d3.Wait), float64(slack), "the last slot was given back")
}

// TestApproxSweepSparesNewEntry replays the interleaving that lost a
// request: a sync sweeps a key between the making of its entry and its
// first Take. A new entry's TAT of 0 looks long expired; it must still
// keep that Take.
func TestApproxSweepSparesNewEntry(t *testing.T) {
	srv := sharedServer(t)
	st, _ := newTestStore(t, srv, WithSyncPeriod(time.Minute))
	ctx := context.Background()
	for _, alg := range storeAlgorithms() {
		t.Run(string(alg), func(t *testing.T) {
			lim := store.Limit{Algorithm: alg, Limit: 1, Window: time.Minute, Mode: store.Approximate}
			key := "sweep-new/" + string(alg)
			e := st.entry(key, lim)
			require.NotNil(t, e)
			st.syncOnce() // the sweep comes first
			d, err := st.takeTracked(ctx, e, 1, int64(time.Since(st.start)))
			require.NoError(t, err)
			require.True(t, d.OK)
			require.False(t, e.dead(), "the sweep forgot an entry before its first Take")
			d, err = st.Take(ctx, key, lim, 1)
			require.NoError(t, err)
			assert.False(t, d.OK, "the first Take was lost: a second one of a limit of 1 passed")
		})
	}
}

// TestApproxSweepAndTake checks the two orders of a sweep forgetting an
// idle entry and a Take that holds it: a Take that marked the entry used
// first keeps it alive; one that comes after the sweep finds it dead, and
// Take decides again on a new entry instead of losing the request.
func TestApproxSweepAndTake(t *testing.T) {
	srv := sharedServer(t)
	st, _ := newTestStore(t, srv, WithSyncPeriod(time.Minute), WithIdleExpiry(time.Millisecond))
	ctx := context.Background()
	// A limit whose state stops mattering 20ms after a Take.
	lim := store.Limit{Algorithm: store.TokenBucket, Limit: 1, Window: 20 * time.Millisecond, Mode: store.Approximate}
	idle := func(key string) *entry {
		t.Helper()
		_, err := st.Take(ctx, key, lim, 1)
		require.NoError(t, err)
		e := st.lookup(key, lim)
		require.NotNil(t, e)
		st.syncOnce() // pushes the Take; clears used
		// Until the store's clock says the entry expired: the sync may have
		// lowered its estimate of Redis's clock (a slow round trip on a
		// busy host), which then stalls for as long (see Store.now).
		require.Eventually(t, func() bool { return e.expired(st.now(), int64(time.Millisecond)) },
			10*time.Second, 5*time.Millisecond)
		return e
	}

	e := idle("sweep-take/first")
	if e.state.Load()&stUsed == 0 {
		e.state.Or(stUsed) // a Take marks it used, then the sweep runs
	}
	st.syncOnce()
	assert.False(t, e.dead(), "swept although a Take had marked it used")
	assert.Same(t, e, st.lookup("sweep-take/first", lim))

	e = idle("sweep-take/after")
	st.syncOnce()
	require.True(t, e.dead(), "an idle, expired entry is forgotten")
	assert.Nil(t, st.lookup("sweep-take/after", lim))
	_, err := st.takeTracked(ctx, e, 1, int64(time.Since(st.start)))
	require.NoError(t, err)
	assert.True(t, e.dead(), "a Take on a forgotten entry must see it dead, to decide again")
	d, err := st.Take(ctx, "sweep-take/after", lim, 1)
	require.NoError(t, err)
	assert.True(t, d.OK)
	ne := st.lookup("sweep-take/after", lim)
	require.NotNil(t, ne)
	assert.NotSame(t, e, ne)
}

// leasedNow returns what e's current window holds in leases: permits
// counted in cur that no Take has admitted yet.
func leasedNow(e *entry) int64 {
	ls := e.leases.Load()
	if ls == nil {
		return 0
	}
	var n int64
	for i := range *ls {
		n += leaseOf((*ls)[i].word.Load(), e.idx)
	}
	return n
}

// TestApproxSlidingLeases decides a sliding counter with leases through
// a table of timestamps: every admission is counted once in the window it
// is made in (cur minus what leases still hold), leases of a window that
// ended are not used in the next, and near the limit they are given back,
// so admissions stop at the limit, short of it by at most the leases of
// the other CPUs.
func TestApproxSlidingLeases(t *testing.T) {
	st, _ := newTestStore(t, sharedServer(t), WithSyncPeriod(time.Minute))
	const limit = 20000
	lim := store.Limit{Algorithm: store.SlidingCounter, Limit: limit, Window: time.Minute, Mode: store.Approximate}
	e := st.newEntry("leases", lim)
	ls := make([]lease, stripe.Count())
	e.leases.Store(&ls)
	w := int64(time.Minute)
	t0 := 1000*w + w/10 // 6s into window 1000
	admitted := func(at int64, n int) (ok int64) {
		for range n {
			if e.take(st.picker, at, 1).OK {
				ok++
			}
		}
		return ok
	}

	ok := admitted(t0, 100)
	assert.Equal(t, int64(100), ok)
	e.mu.Lock()
	assert.Equal(t, ok, e.cur-leasedNow(e), "each admission counted once in cur")
	assert.Greater(t, leasedNow(e), int64(0), "a lease was taken")
	assert.LessOrEqual(t, e.cur, int64(100+stripe.MaxLease*len(ls)))
	e.mu.Unlock()

	// Every CPU holds 30 permits of this window. A Take of more than its
	// lease holds is decided under the mutex, and the lease it refills
	// gives its 30 back.
	e.mu.Lock()
	for i := range ls {
		e.cur -= leaseOf(ls[i].word.Load(), e.idx)
		ls[i].word.Store(leaseWord(e.idx, 30))
		e.cur += 30
	}
	e.mu.Unlock()
	require.True(t, e.take(st.picker, t0, 100).OK)
	ok += 100
	e.mu.Lock()
	assert.Equal(t, ok, e.cur-leasedNow(e), "a refilled lease gives back what it held")
	e.mu.Unlock()

	// The next window: the old window's leases are not used in it; its
	// count (leases included) becomes the previous window's.
	t1 := t0 + w
	e.mu.Lock()
	oldCur := e.cur
	e.mu.Unlock()
	ok = admitted(t1, 50)
	assert.Equal(t, int64(50), ok)
	e.mu.Lock()
	assert.Equal(t, int64(1001), e.idx)
	assert.Equal(t, oldCur, e.prev)
	assert.Equal(t, ok, e.cur-leasedNow(e), "the new window counts only its own admissions")
	e.mu.Unlock()
	for i := range ls {
		if ls[i].word.Load()>>leaseBits == 1000 {
			assert.False(t, e.takeLeased(&ls, uint32(i), t1, 1), "CPU %d used a lease of the window before", i)
		}
	}

	// Up to the limit, in a window two windows on (nothing before it).
	t3 := t0 + 3*w
	ok = admitted(t3, 2*limit)
	assert.LessOrEqual(t, ok, int64(limit), "never beyond the limit")
	assert.GreaterOrEqual(t, ok, int64(limit-stripe.MaxLease*len(ls)), "short of it by at most the other CPUs' leases")
	e.mu.Lock()
	assert.Equal(t, ok, e.cur-leasedNow(e))
	assert.LessOrEqual(t, e.cur, int64(limit))
	e.mu.Unlock()
}

// TestApproxSlidingLeasesConcurrent hammers one approximate sliding
// counter from 32 goroutines through Take: its window admits the limit
// at most, and short of it by at most the leases out; every permit counted
// was admitted or is still leased (a lease slice made twice stranded
// permits).
func TestApproxSlidingLeasesConcurrent(t *testing.T) {
	st, _ := newTestStore(t, sharedServer(t), WithTimeout(2*time.Second))
	const limit = 50000
	// A day's window: the run does not straddle two, but when it does
	// (at midnight on Redis's clock) the run is made again.
	lim := store.Limit{Algorithm: store.SlidingCounter, Limit: limit, Window: 24 * time.Hour, Mode: store.Approximate}
	ctx := context.Background()
	for attempt := 0; ; attempt++ {
		key := "leases-concurrent/" + itoa(int64(attempt))
		before := st.now() / int64(lim.Window)
		var ok, failed atomic.Int64
		var wg sync.WaitGroup
		for range 32 {
			wg.Go(func() {
				for {
					d, err := st.Take(ctx, key, lim, 1)
					if err != nil {
						failed.Add(1)
						return
					}
					if !d.OK {
						return
					}
					ok.Add(1)
				}
			})
		}
		wg.Wait()
		if st.now()/int64(lim.Window) != before && attempt == 0 {
			continue
		}
		require.Zero(t, failed.Load())
		assert.LessOrEqual(t, ok.Load(), int64(limit))
		assert.GreaterOrEqual(t, ok.Load(), int64(limit-stripe.MaxLease*stripe.Count()))
		e := st.lookup(key, lim)
		require.NotNil(t, e)
		e.mu.Lock()
		assert.Equal(t, ok.Load(), e.cur-leasedNow(e), "every permit counted is admitted or still leased")
		e.mu.Unlock()
		// Whether the goroutines contended (and so made leases) depends on
		// the host: on a busy one the process may run on one CPU at a time.
		// TestApproxSlidingLeases makes leases by a table.
		t.Logf("leases made: %v", e.leases.Load() != nil)
		return
	}
}

// mostWithin returns the most of the admissions spans (each [before,
// after] around an admission) that can lie in one span of length s: those
// that meet [x, x+s], for x at each span's end.
func mostWithin(spans [][2]int64, s int64) int64 {
	var most int64
	for _, x := range spans {
		var n int64
		for _, y := range spans {
			if y[0] <= x[1]+s && y[1] >= x[1] {
				n++
			}
		}
		most = max(most, n)
	}
	return most
}

// TestApproxBoundUnderLoad runs two Stores (instances) on one Redis, with
// the default sync period, while spinning goroutines saturate the CPUs, and
// checks every whole window (of Redis's clock, each Store's view) against
// the documented bound with S measured: L + A(S), where S is the sum of the
// Stores' Stats.MaxSyncGap (plus the difference of their clocks' offsets)
// and A(S) the most one instance admitted within a span of S. An admission
// counts in a window only when its whole Take lies in it, and A(S) counts
// every admission whose Take meets the span, so a loaded machine can only
// lower the counts and raise the bound.
func TestApproxBoundUnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("5s under CPU saturation")
	}
	srv := sharedServer(t)
	prefix := redistest.UniquePrefix()
	const (
		n        = 2
		limit    = 100
		interval = 50 * time.Millisecond // 10 goroutines: 200 a second per instance
		run      = 4 * time.Second
	)
	var stores []*Store
	for range n {
		st, err := New(srv.Client(t), WithPrefix(prefix), WithTimeout(suiteTimeout))
		require.NoError(t, err)
		t.Cleanup(func() { _ = st.Close() })
		stores = append(stores, st)
	}
	lim := store.Limit{Algorithm: store.SlidingCounter, Limit: limit, Window: time.Second, Mode: store.Approximate}
	w := int64(lim.Window)
	redistest.Saturate(t, 2)

	spans := make([][][2]int64, n)
	var mu sync.Mutex
	var failed atomic.Int64
	var wg sync.WaitGroup
	end := time.Now().Add(run)
	for i, st := range stores {
		for range 10 {
			wg.Go(func() {
				next := time.Now()
				for time.Now().Before(end) {
					before := st.now()
					d, err := st.Take(context.Background(), "approx-load", lim, 1)
					after := st.now()
					if err != nil {
						failed.Add(1)
					} else if d.OK {
						mu.Lock()
						spans[i] = append(spans[i], [2]int64{before, after})
						mu.Unlock()
					}
					next = next.Add(interval)
					time.Sleep(time.Until(next))
				}
			})
		}
	}
	wg.Wait()
	for i, st := range stores {
		t.Logf("store %d: %+v", i, st.Stats())
	}
	require.Zero(t, failed.Load())

	var s int64
	for _, st := range stores {
		s += int64(st.Stats().MaxSyncGap)
	}
	s += max(stores[0].offset.Load()-stores[1].offset.Load(), stores[1].offset.Load()-stores[0].offset.Load())
	var a int64
	perWindow := map[int64]int64{}
	var first, last int64 = 1 << 62, 0
	for _, sp := range spans {
		a = max(a, mostWithin(sp, s))
		for _, x := range sp {
			first, last = min(first, x[0]/w), max(last, x[1]/w)
			if x[0]/w == x[1]/w {
				perWindow[x[0]/w]++
			}
		}
	}
	bound := int64(limit) + (n-1)*a
	full := 0
	for idx := first + 1; idx < last; idx++ {
		full++
		got := perWindow[idx]
		t.Logf("window %d: %d admitted (limit %d; S = %s, A(S) = %d, bound %d)", idx, got, limit, time.Duration(s), a, bound)
		assert.LessOrEqual(t, got, bound, "window %d", idx)
	}
	assert.NotZero(t, full)
}

// TestMaxSyncGapGrowsDuringAnOutage freezes Redis while a count waits to
// be pushed: Stats.MaxSyncGap counts the gap in progress, at least the
// time since the freeze, before Redis answers again (it reported the last
// ended gap, a sync period, for as long as the outage lasted) and after,
// and stops growing at Close. No round that starts after the Take can
// succeed while Redis is frozen, so a loaded host only makes the gap
// longer.
func TestMaxSyncGapGrowsDuringAnOutage(t *testing.T) {
	srv := redistest.StartOwned(t)
	c := srv.Client(t, func(o *redis.Options) { o.ContextTimeoutEnabled = true })
	st, err := New(c, WithPrefix(redistest.UniquePrefix()), WithSyncPeriod(10*time.Millisecond), WithTimeout(50*time.Millisecond))
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	lim := store.Limit{Algorithm: store.SlidingCounter, Limit: 1000, Window: time.Second, Mode: store.Approximate}
	ctx := context.Background()
	_, err = st.Take(ctx, "gap", lim, 1)
	require.NoError(t, err)
	require.Eventually(t, func() bool { return st.Stats().Syncs > 0 }, 10*time.Second, 5*time.Millisecond)

	srv.Freeze(t)
	t.Cleanup(func() { srv.Thaw(t) })
	require.Eventually(t, func() bool {
		ctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
		defer cancel()
		return c.Ping(ctx).Err() != nil
	}, 10*time.Second, time.Millisecond, "Redis frozen")
	// A count to push: every round from now on has work, and fails.
	_, err = st.Take(ctx, "gap", lim, 1)
	require.NoError(t, err)
	frozen := time.Now()
	time.Sleep(500 * time.Millisecond)
	elapsed := time.Since(frozen)
	gap := st.Stats().MaxSyncGap
	t.Logf("frozen for %v: MaxSyncGap %v", elapsed, gap)
	assert.GreaterOrEqual(t, gap, elapsed)

	srv.Thaw(t)
	elapsed = time.Since(frozen)
	require.Eventually(t, func() bool {
		_, err := c.Get(ctx, "x").Result()
		return err == nil || err == redis.Nil
	}, 10*time.Second, 5*time.Millisecond, "Redis answers")
	require.Eventually(t, func() bool { return st.Err() == nil }, 10*time.Second, 5*time.Millisecond, "syncs again")
	assert.GreaterOrEqual(t, st.Stats().MaxSyncGap, elapsed, "the outage's gap is kept")

	require.NoError(t, st.Close())
	closed := st.Stats().MaxSyncGap
	time.Sleep(closed + 20*time.Millisecond) // past any gap it recorded
	assert.Equal(t, closed, st.Stats().MaxSyncGap, "a closed Store's gap no longer grows")
}
