// Package storetest is the behaviour suite every store.Store must pass. The
// memory store runs it on a fake clock; the Redis store runs it against a
// real redis-server, on Redis's clock.
package storetest

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core/internal/flow"
	"github.com/sluicekit/sluice/core/store"
)

// Harness is what the suite needs of a Store under test.
type Harness struct {
	// Store is a Store whose keys the suite may use freely; the suite
	// prefixes its keys with the test's name.
	Store store.Store
	// Sleep lets d pass on the store's clock: Advance for a store on a
	// fake clock, a real sleep for a store on a server's clock.
	Sleep func(d time.Duration)
	// Slack is 0 on a fake clock, which only Sleep moves. On a server's
	// clock, time passes between the suite's calls: the suite measures it
	// on this process's clock, however long a loaded machine takes, and
	// checks expected waits and retry times within it plus Slack, how far
	// the store's view of its clock may run ahead of this process's (a
	// few milliseconds), or, in approximate mode, behind the server's.
	Slack time.Duration
	// Mode is the mode of the limits the suite uses.
	Mode store.Mode
}

// Run runs the suite. newHarness is called once per test.
func Run(t *testing.T, newHarness func(t *testing.T) Harness) {
	tests := []struct {
		name string
		fn   func(t *testing.T, h Harness, key string)
	}{
		{"SlidingCounterLimit", slidingCounterLimit},
		{"TokenBucketBurstAndRefill", tokenBucket},
		{"LeakyBucketPacing", leakyBucket},
		{"LastAdmittedTellsNextRetry", lastAdmittedTellsNextRetry},
		{"UndoGivesBack", undoGivesBack},
		{"CountOfMany", countOfMany},
		{"ZeroLimitBlocks", zeroLimit},
		{"KeysAreIndependent", keysIndependent},
		{"ConcurrentTakesNeverExceed", concurrentTakes},
		{"InvalidLimitIsAnError", invalidLimit},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			tt.fn(t, h, fmt.Sprintf("storetest/%s/%d", t.Name(), time.Now().UnixNano()))
		})
	}
}

func take(t *testing.T, h Harness, key string, lim store.Limit, n int64) store.Decision {
	t.Helper()
	lim.Mode = h.Mode
	d, err := h.Store.Take(context.Background(), key, lim, n)
	require.NoError(t, err)
	return d
}

// between asserts lo <= got <= hi.
func between(t *testing.T, got, lo, hi time.Duration, msg string) {
	t.Helper()
	assert.GreaterOrEqual(t, got, lo, msg)
	assert.LessOrEqual(t, got, hi, msg)
}

// passed returns the most time that passed on the store's clock since
// start, a reading of this process's clock before a call: 0 on a fake
// clock, else the time passed on this process's clock plus h.Slack.
func passed(h Harness, start time.Time) time.Duration {
	if h.Slack == 0 {
		return 0
	}
	return time.Since(start) + h.Slack
}

func slidingCounterLimit(t *testing.T, h Harness, key string) {
	lim := store.Limit{Algorithm: store.SlidingCounter, Limit: 5, Window: 2 * time.Second}
	for i := range 5 {
		d := take(t, h, key, lim, 1)
		require.True(t, d.OK, "request %d", i)
		assert.Equal(t, int64(5), d.Limit)
		assert.Equal(t, int64(4-i), d.Remaining, "request %d", i)
	}
	d := take(t, h, key, lim, 1)
	require.False(t, d.OK, "the 6th request in the window")
	assert.Equal(t, int64(0), d.Remaining)
	between(t, d.RetryAfter, time.Nanosecond, 2*lim.Window, "retry after")
	// Two windows later the previous window weighs nothing.
	h.Sleep(2*lim.Window + h.Slack)
	assert.True(t, take(t, h, key, lim, 1).OK, "after two windows")
}

func tokenBucket(t *testing.T, h Harness, key string) {
	// 4 per 2s: one token per 500ms; capacity 6. The time that passes on
	// the store's clock meanwhile refills it: it is measured (passed).
	lim := store.Limit{Algorithm: store.TokenBucket, Limit: 4, Window: 2 * time.Second, Burst: 2}
	const refill = 500 * time.Millisecond
	start := time.Now()
	for i := range 6 {
		require.True(t, take(t, h, key, lim, 1).OK, "request %d of the burst", i)
	}
	// A token refills every 500ms from the first request on: as many as
	// refilled meanwhile are admitted, then the rejection's retry time is
	// the next token's refill.
	var d store.Decision
	var rejected time.Time
	extra := -1
	for extra < 6 && (extra < 0 || d.OK) {
		extra++
		rejected = time.Now()
		d = take(t, h, key, lim, 1)
	}
	p := passed(h, start)
	require.False(t, d.OK, "the bucket is empty")
	assert.LessOrEqual(t, extra, int(p/refill), "tokens refilled in %s", p)
	between(t, d.RetryAfter, max(time.Duration(1+extra)*refill-p, time.Nanosecond), refill, "one token's refill")
	h.Sleep(d.RetryAfter + h.Slack)
	// One token refilled, and one more per refill that passed beyond
	// the retry time (on a loaded machine, Sleep overruns).
	// A store whose clock fell behind this process's refills later, as
	// its rejection says: an approximate store that lowers its estimate
	// of the server's clock holds its time until the process catches up.
	// It may take one refill more.
	got := 0
	for late := time.Duration(0); got <= 6; {
		e := take(t, h, key, lim, 1)
		if e.OK {
			got++
			continue
		}
		if got > 0 || late+e.RetryAfter > refill {
			break
		}
		late += e.RetryAfter
		h.Sleep(e.RetryAfter)
	}
	most := 1 + int((max(passed(h, rejected), d.RetryAfter)-d.RetryAfter)/refill)
	assert.GreaterOrEqual(t, got, 1, "one token refilled")
	assert.LessOrEqual(t, got, most, "only one per refill")
}

func leakyBucket(t *testing.T, h Harness, key string) {
	// One slot per 100ms; a request may wait up to 300ms. Each wait is
	// shorter by the time that passed on the store's clock since the
	// first request (measured: passed), never longer than its turn. In
	// approximate mode, never longer than its turn plus Slack: an
	// admission the Store pushed takes its turn on the server's clock,
	// which the Store's estimate may be behind (measured: 260ns, with
	// the last request then refused).
	lim := store.Limit{Algorithm: store.LeakyBucket, Limit: 10, Window: time.Second, MaxWait: 300 * time.Millisecond}
	const slot = 100 * time.Millisecond
	var late time.Duration
	if h.Mode == store.Approximate {
		late = h.Slack
	}
	start := time.Now()
	for i := range 4 {
		d := take(t, h, key, lim, 1)
		if i == 3 && !d.OK && late > 0 {
			assert.LessOrEqual(t, d.RetryAfter, late, "request 3 refused by more than the clock estimate's error")
			return
		}
		require.True(t, d.OK, "request %d", i)
		want := time.Duration(i) * slot
		between(t, d.Wait, max(want-passed(h, start), 0), want+late, fmt.Sprintf("wait of request %d", i))
	}
	d := take(t, h, key, lim, 1)
	p := passed(h, start)
	if p < slot {
		require.False(t, d.OK, "its turn is 400ms away, beyond maxWait")
	}
	if d.OK { // a slot passed meanwhile
		between(t, d.Wait, 4*slot-p, lim.MaxWait, "wait of request 4")
		return
	}
	between(t, d.RetryAfter, max(slot-p, time.Nanosecond), slot, "retry after")
}

// lastAdmittedTellsNextRetry: the decision that leaves no quota tells, as
// Next, the RetryAfter of the rejection right after it: exactly on a fake
// clock, else less the time that passed between them.
func lastAdmittedTellsNextRetry(t *testing.T, h Harness, key string) {
	for _, lim := range []store.Limit{
		{Algorithm: store.SlidingCounter, Limit: 2, Window: 10 * time.Second},
		{Algorithm: store.TokenBucket, Limit: 2, Window: 10 * time.Second, Burst: 1},
		{Algorithm: store.LeakyBucket, Limit: 2, Window: 10 * time.Second, MaxWait: 2 * time.Second},
	} {
		k := key + "/" + string(lim.Algorithm)
		var d store.Decision
		var start time.Time
		for i := 0; i < 3 && (i == 0 || d.Remaining > 0); i++ {
			start = time.Now()
			d = take(t, h, k, lim, 1)
			require.True(t, d.OK, "%s: request %d", lim.Algorithm, i)
		}
		require.Zero(t, d.Remaining, "%s", lim.Algorithm)
		after := take(t, h, k, lim, 1)
		require.False(t, after.OK, "%s", lim.Algorithm)
		between(t, after.RetryAfter, d.Next-passed(h, start), d.Next+h.Slack, fmt.Sprintf("%s: the rejection's RetryAfter and the last admission's Next", lim.Algorithm))
	}
}

func undoGivesBack(t *testing.T, h Harness, key string) {
	for _, alg := range []store.Algorithm{store.SlidingCounter, store.TokenBucket} {
		lim := store.Limit{Algorithm: alg, Limit: 2, Window: 10 * time.Second}
		k := key + "/" + string(alg)
		take(t, h, k, lim, 1)
		d := take(t, h, k, lim, 1)
		require.True(t, d.OK)
		lim.Mode = h.Mode
		require.NoError(t, h.Store.Undo(context.Background(), k, lim, d, 1))
		assert.True(t, take(t, h, k, lim, 1).OK, "%s: the undone request's quota", alg)
		assert.False(t, take(t, h, k, lim, 1).OK, "%s: and no more", alg)
	}
}

func countOfMany(t *testing.T, h Harness, key string) {
	for _, alg := range []store.Algorithm{store.SlidingCounter, store.TokenBucket} {
		lim := store.Limit{Algorithm: alg, Limit: 5, Window: 10 * time.Second}
		k := key + "/" + string(alg)
		d := take(t, h, k, lim, 3)
		require.True(t, d.OK, "%s", alg)
		assert.Equal(t, int64(2), d.Remaining, "%s", alg)
		assert.False(t, take(t, h, k, lim, 3).OK, "%s: 3 more do not fit", alg)
		assert.True(t, take(t, h, k, lim, 2).OK, "%s: 2 do", alg)
	}
}

func zeroLimit(t *testing.T, h Harness, key string) {
	for _, alg := range flow.StoreAlgorithms() {
		d := take(t, h, key+"/"+string(alg), store.Limit{Algorithm: store.Algorithm(alg), Limit: 0, Window: time.Second}, 1)
		assert.False(t, d.OK, "%s", alg)
	}
}

func keysIndependent(t *testing.T, h Harness, key string) {
	lim := store.Limit{Algorithm: store.SlidingCounter, Limit: 1, Window: 10 * time.Second}
	require.True(t, take(t, h, key+"/a", lim, 1).OK)
	require.False(t, take(t, h, key+"/a", lim, 1).OK)
	assert.True(t, take(t, h, key+"/b", lim, 1).OK, "another key has its own limit")
}

func concurrentTakes(t *testing.T, h Harness, key string) {
	for _, alg := range []store.Algorithm{store.SlidingCounter, store.TokenBucket} {
		lim := store.Limit{Algorithm: alg, Limit: 50, Window: time.Minute, Mode: h.Mode}
		k := key + "/" + string(alg)
		var admitted atomic.Int64
		var wg sync.WaitGroup
		for range 20 {
			wg.Go(func() {
				for range 10 {
					d, err := h.Store.Take(context.Background(), k, lim, 1)
					if assert.NoError(t, err) && d.OK {
						admitted.Add(1)
					}
				}
			})
		}
		wg.Wait()
		assert.Equal(t, int64(50), admitted.Load(), "%s: 200 requests against a limit of 50", alg)
	}
}

func invalidLimit(t *testing.T, h Harness, key string) {
	bad := []store.Limit{
		{Algorithm: store.Algorithm(flow.LeapArray), Limit: 1, Window: time.Second},
		{Algorithm: store.TokenBucket, Limit: -1, Window: time.Second},
		{Algorithm: store.TokenBucket, Limit: 1},
	}
	for _, lim := range bad {
		_, err := h.Store.Take(context.Background(), key, lim, 1)
		assert.Error(t, err, "%+v", lim)
	}
}
