package core_test

import (
	"context"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/clock"
)

// queue runs requests that wait their turn in a leaky bucket on a Guard's
// fake clock, each in its goroutine, and notes the fake time each was
// served at.
type queue struct {
	t       *testing.T
	g       *core.Guard
	fc      *clock.Fake
	ctx     context.Context // the failure timeout
	mu      sync.Mutex
	served  map[int]time.Duration
	err     map[int]error
	waiting int // goroutines not yet returned
	wg      sync.WaitGroup
}

// enter starts request i with ctx and returns once it waits (or returned).
func (q *queue) enter(ctx context.Context, i int, opts ...core.EnterOption) {
	q.mu.Lock()
	q.waiting++
	q.mu.Unlock()
	q.wg.Go(func() {
		e, err := q.g.Enter(ctx, "r", opts...)
		at := q.fc.Now() // the clock moves only once every woken request noted its time (settle)
		if err == nil {
			e.Exit(nil)
		}
		q.mu.Lock()
		defer q.mu.Unlock()
		q.waiting--
		if err != nil {
			q.err[i] = err
			return
		}
		q.served[i] = at
	})
	q.settle()
}

// settle returns once every request still running sleeps on the clock.
func (q *queue) settle() {
	for {
		q.mu.Lock()
		n := q.waiting
		q.mu.Unlock()
		now, cancel := context.WithCancel(q.ctx)
		cancel()
		if n == 0 || q.fc.WaitForSleepers(now, n) == nil {
			return
		}
		require.NoError(q.t, q.ctx.Err(), "requests never settled")
		time.Sleep(100 * time.Microsecond)
	}
}

// gone returns once n requests returned an error (their clients hung up),
// and the others settled.
func (q *queue) gone(n int) {
	for {
		q.mu.Lock()
		k := len(q.err)
		q.mu.Unlock()
		if k >= n {
			q.settle()
			return
		}
		require.NoError(q.t, q.ctx.Err(), "the requests hung up never returned")
		time.Sleep(100 * time.Microsecond)
	}
}

// TestLeakyAbandonedWaitsNeverDelayPatientOnes attacks the flow and the
// hotspot leaky buckets (10 per second: turns 100ms apart, up to 10s of
// wait) with clients that give up their turn: 30 requests queue behind
// the one served at once, then 15 of them, chosen at random (the last in
// the queue among them), hang up; then 15 patient requests queue. Each
// request still waiting is served at its turn, and the 15 patient ones
// take the 15 turns given up, in order: no patient request is served after
// the last turn taken before (3s), and no turn serves two requests. Time
// is the Guard's fake clock, stepped 100ms at a time; held on main at
// 4fe9240 for both, with 5 random draws each.
func TestLeakyAbandonedWaitsNeverDelayPatientOnes(t *testing.T) {
	for _, kind := range []core.Kind{core.KindFlow, core.KindHotspot} {
		for seed := uint64(1); seed <= 5; seed++ {
			r := core.Rule{Name: "leaky", Resource: "r", Kind: kind, Algorithm: core.AlgorithmLeakyBucket,
				Limit: 10, Window: time.Second, MaxWait: 10 * time.Second}
			if kind == core.KindHotspot {
				r.Param = "header:X-User-ID"
			}
			g, fc := newGuard(t, r)
			ctx, stop := context.WithTimeout(context.Background(), 30*time.Second) // failure timeout only
			q := &queue{t: t, g: g, fc: fc, ctx: ctx, served: map[int]time.Duration{}, err: map[int]error{}}
			start := fc.Now()
			const queued, gone = 30, 15
			hangUps := make([]context.CancelFunc, queued+1)
			for i := range queued + 1 {
				var c context.Context
				c, hangUps[i] = context.WithCancel(ctx)
				q.enter(c, i, user("alice"))
			}
			rng := rand.New(rand.NewPCG(seed, 1))
			left := rng.Perm(queued)[:gone]
			if !contains(left, queued-1) {
				left[0] = queued - 1
			}
			for _, i := range left {
				hangUps[i+1]() // request i+1 waits for turn i+1
			}
			q.gone(gone)
			for i := range gone {
				q.enter(ctx, 100+i, user("alice"))
			}
			for step := range 60 {
				fc.Set(start + time.Duration(step)*100*time.Millisecond)
				q.settle()
			}
			q.wg.Wait()
			stop()
			for _, c := range hangUps {
				c()
			}

			turns := map[time.Duration]int{}
			for i, at := range q.served {
				turns[at-start]++
				if i < 100 {
					assert.Equal(t, time.Duration(i)*100*time.Millisecond, at-start, "%s seed %d: request %d, still waiting, is served at its turn", kind, seed, i)
				} else {
					assert.LessOrEqual(t, at-start, time.Duration(queued)*100*time.Millisecond, "%s seed %d: patient request %d", kind, seed, i-100)
				}
			}
			for at, n := range turns {
				assert.Equal(t, 1, n, "%s seed %d: requests served at %v", kind, seed, at)
			}
			assert.Len(t, q.err, gone, "%s seed %d: only those who hung up fail: %v", kind, seed, q.err)
			assert.Len(t, q.served, queued+1, "%s seed %d", kind, seed)
		}
	}
}

func contains(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
