package redisstore_test

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
	"github.com/sluicekit/sluice/core/store/redisstore"
	"github.com/sluicekit/sluice/core/store/redisstore/internal/redistest"
)

// TestReloadedWindowKeepsWhatWasSpent: a reload that changes a rule's
// window or limit keeps what each client has spent and owes (README,
// package core: "a tightened rule is waited out at its new rate"), with
// Redis as with store.NewMemory. 10 of 10 per minute are spent, then the
// rule is reloaded tighter (a window of 2 minutes, a limit of 5) or looser
// (a window of 30s, a limit of 20): the requests admitted at once after it
// are as many as in memory, and a bucket's next request is told to retry
// after as long (10 owed at 5 a minute: 1m12s, not the 12s of a TAT kept
// in time). It failed before the fix: a sliding counter's Redis keys named
// the window (a longer one admitted 10 more at once), and a bucket's TAT
// was kept in time, not in requests owed (an exact one admitted 5 more).
func TestReloadedWindowKeepsWhatWasSpent(t *testing.T) {
	srv := redisstore.SharedRedis(t)
	type change struct {
		name   string
		limit  int64
		window time.Duration
	}
	changes := []change{
		{"window 2m", 10, 2 * time.Minute},
		{"limit 5", 5, time.Minute},
		{"window 30s", 10, 30 * time.Second},
		{"limit 20", 20, time.Minute},
	}
	type outcome struct {
		admitted   int
		retryAfter time.Duration
	}
	// run spends 10 of 10 a minute on g, reloads rule to ch and returns
	// what g admits at once after it, and the RetryAfter of its first
	// rejection.
	run := func(t *testing.T, g *core.Guard, rule core.Rule, ch change) (o outcome) {
		enter := func() (bool, time.Duration) {
			e, err := g.Enter(context.Background(), rule.Resource)
			if err == nil {
				e.Exit(nil)
				return true, 0
			}
			var b *core.BlockedError
			require.ErrorAs(t, err, &b)
			return false, b.RetryAfter
		}
		for range 10 {
			ok, _ := enter()
			require.True(t, ok, "the first 10")
		}
		rule.Limit, rule.Window = ch.limit, ch.window
		require.NoError(t, g.SetRules([]core.Rule{rule}))
		for range 30 {
			ok, ra := enter()
			if !ok {
				o.retryAfter = ra
				return o
			}
			o.admitted++
		}
		return o
	}
	for _, alg := range []core.Algorithm{core.AlgorithmSlidingCounter, core.AlgorithmTokenBucket} {
		for _, mode := range []store.Mode{store.Exact, store.Approximate} {
			for _, ch := range changes {
				name := fmt.Sprint(alg, " ", mode, " ", ch.name)
				t.Run(name, func(t *testing.T) {
					rule := core.Rule{Name: "r", Resource: "GET /x", Kind: core.KindFlow, Algorithm: alg, Limit: 10,
						Window: time.Minute, Store: "redis", Mode: mode}
					mem, err := store.NewMemory(clock.NewFake(time.Hour), 0)
					require.NoError(t, err)
					mg, err := core.New(core.WithStore("redis", mem), core.WithRules(rule))
					require.NoError(t, err)
					t.Cleanup(func() { _ = mg.Close() })
					want := run(t, mg, rule, ch)
					in := newInstance(t, srv, redistest.UniquePrefix(), patient, core.WithRules(rule))
					got := run(t, in.g, rule, ch)
					assert.Equal(t, want.admitted, got.admitted, "admitted at once after the reload, as in memory")
					if alg != core.AlgorithmSlidingCounter { // its windows start at the first request in Redis, aligned in memory
						assert.InDelta(t, want.retryAfter.Seconds(), got.retryAfter.Seconds(), 5, "the wait told, as in memory (%s)", want.retryAfter)
					}
				})
			}
		}
	}
}

// TestReloadedBucketKeepsItsDebt: a leaky bucket's slot, and a token
// bucket's tokens, are owed at the new rate after the window or limit
// changes, exact or approximate, as with store.NewMemory: one request of 1
// a minute, the window reloaded to 2 minutes, is waited out 2 minutes, not
// 1 (a TAT kept in time).
func TestReloadedBucketKeepsItsDebt(t *testing.T) {
	srv := redisstore.SharedRedis(t)
	ctx := context.Background()
	for _, alg := range []store.Algorithm{store.LeakyBucket, store.TokenBucket} {
		for _, mode := range []store.Mode{store.Exact, store.Approximate} {
			t.Run(fmt.Sprint(alg, " ", mode), func(t *testing.T) {
				in := newInstance(t, srv, redistest.UniquePrefix(), patient)
				mem, err := store.NewMemory(clock.NewFake(time.Hour), 0)
				require.NoError(t, err)
				before := store.Limit{Algorithm: alg, Limit: 1, Window: time.Minute, Mode: mode}
				after := before
				after.Window = 2 * time.Minute
				for _, st := range []store.Store{mem, in.st} {
					d, err := st.Take(ctx, "k", before, 1)
					require.NoError(t, err)
					require.True(t, d.OK)
					d, err = st.Take(ctx, "k", after, 1)
					require.NoError(t, err)
					assert.False(t, d.OK, "%T: the slot owed", st)
					assert.InDelta(t, (2 * time.Minute).Seconds(), d.RetryAfter.Seconds(), 5, "%T: owed at the new rate", st)
				}
			})
		}
	}
}

// TestReloadedWindowCarriedOnce: the first decisions in a sliding
// counter's new window, arriving together (batched in one pipeline, the
// decisions of one key in one script call), carry the old window's counts
// once: 10 of 10 a minute spent, 32 concurrent requests under a window of
// 2 minutes admit none, and under 30s none either (memory: the 10 count
// until the old window's end).
func TestReloadedWindowCarriedOnce(t *testing.T) {
	srv := redisstore.SharedRedis(t)
	ctx := context.Background()
	for _, w := range []time.Duration{2 * time.Minute, 30 * time.Second} {
		in := newInstance(t, srv, redistest.UniquePrefix(), patient)
		lim := store.Limit{Algorithm: store.SlidingCounter, Limit: 10, Window: time.Minute}
		d, err := in.st.Take(ctx, "k", lim, 10)
		require.NoError(t, err)
		require.True(t, d.OK)
		lim.Window = w
		var admitted atomic.Int64
		var wg sync.WaitGroup
		for range 32 {
			wg.Go(func() {
				d, err := in.st.Take(ctx, "k", lim, 1)
				assert.NoError(t, err)
				if d.OK {
					admitted.Add(1)
				}
			})
		}
		wg.Wait()
		assert.Zero(t, admitted.Load(), "window %s: the 10 spent carried once", w)
	}
}
