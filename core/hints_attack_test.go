package core_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core"
)

// TestHintsAgreeAtRandomTimes attacks "the last admitted response's t and
// the next block's t agree" with every rate algorithm, flow and per-user,
// limits and windows that do not divide into whole milliseconds (3 per 7s,
// 7 per 1s, 1 per 250ms), and requests at once or after random gaps of
// up to Window/Limit (seeded): whenever an
// admitted request leaves no quota, a request right after it is blocked,
// and its RetryAfter and its policy's Reset are the admitted request's
// Reset; a client that waits that long is then admitted (a leaky bucket's:
// not blocked). Requests are made with a done context, so a leaky bucket's
// request that would wait gives its turn back: its buckets empty only when
// the wait is 0. Held on main at 4fe9240 (5018 emptied buckets checked, 842 of them leaky).
func TestHintsAgreeAtRandomTimes(t *testing.T) {
	ctx := context.Background()
	type shape struct {
		limit  int64
		window time.Duration
	}
	shapes := []shape{{3, 7 * time.Second}, {7, time.Second}, {1, 250 * time.Millisecond}, {5, 15 * time.Minute}}
	var rules []core.Rule
	for _, alg := range []core.Algorithm{core.AlgorithmLeapArray, core.AlgorithmSlidingLog, core.AlgorithmSlidingCounter, core.AlgorithmFixedWindow, core.AlgorithmTokenBucket, core.AlgorithmLeakyBucket} {
		for _, s := range shapes {
			r := core.Rule{Kind: core.KindFlow, Algorithm: alg, Limit: s.limit, Window: s.window}
			if alg == core.AlgorithmLeakyBucket {
				r.MaxWait = s.window / 3
			}
			rules = append(rules, r)
		}
	}
	for _, alg := range []core.Algorithm{core.AlgorithmTokenBucket, core.AlgorithmLeakyBucket} {
		for _, s := range shapes {
			r := core.Rule{Kind: core.KindHotspot, Param: "header:X-User-ID", Algorithm: alg, Limit: s.limit, Window: s.window}
			if alg == core.AlgorithmLeakyBucket {
				r.MaxWait = s.window / 3
			}
			rules = append(rules, r)
			r.Burst = 2
			if alg == core.AlgorithmTokenBucket {
				rules = append(rules, r)
			}
		}
	}
	total := map[core.Algorithm]int{}
	defer func() { t.Logf("emptied buckets checked: %v", total) }()
	for _, r := range rules {
		name := fmt.Sprintf("%s %s burst %d %d per %v", r.Kind, r.Algorithm, r.Burst, r.Limit, r.Window)
		r.Name, r.Resource = "r", "r"
		for seed := uint64(1); seed <= 3; seed++ {
			g, fc := newGuard(t, r)
			rng := rand.New(rand.NewPCG(seed, 5))
			checked := 0
			for i := range 300 {
				if rng.IntN(5) < 2 { // else at once: buckets empty too
					fc.Advance(time.Duration(rng.Int64N(int64(r.Window) / r.Limit)))
				}
				var qs []core.Quota
				done, cancel := context.WithCancel(ctx)
				cancel() // a leaky bucket's request that would wait is admitted and gives up: not a block
				e, err := g.Enter(done, "r", user("alice"), core.WithQuotas(&qs))
				if err != nil {
					continue
				}
				e.Exit(nil)
				require.Len(t, qs, 1)
				if qs[0].Remaining > 0 {
					continue
				}
				_, err = g.Enter(ctx, "r", user("alice"))
				var b *core.BlockedError
				if !assert.ErrorAs(t, err, &b, "%s seed %d request %d: the bucket was left empty", name, seed, i) {
					break
				}
				checked++
				assert.Equal(t, qs[0].Reset, b.RetryAfter, "%s seed %d request %d: the last admission's Reset is the next block's RetryAfter", name, seed, i)
				if assert.Len(t, b.Policies, 1) {
					assert.Equal(t, b.RetryAfter, b.Policies[0].Reset, "%s seed %d request %d", name, seed, i)
				}
				fc.Advance(b.RetryAfter)
				_, err = g.Enter(done, "r", user("alice"))
				assert.NotErrorIs(t, err, core.ErrBlocked, "%s seed %d request %d: a client that waits as told passes", name, seed, i)
			}
			if r.Algorithm != core.AlgorithmLeakyBucket { // whose requests that would wait give their turn back here
				assert.Positive(t, checked, "%s seed %d: never emptied", name, seed)
			}
			total[r.Algorithm] += checked
		}
	}
}
