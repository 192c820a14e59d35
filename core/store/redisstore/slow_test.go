package redisstore_test

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/store/redisstore"
	"github.com/sluicekit/sluice/core/store/redisstore/internal/redistest"
)

// slowHook makes one command (or pipeline) in each period wait for its
// context's end before it is sent (stall, through
// BeforeCommand): a reply slower than the store's timeout, while
// Redis itself is healthy.
type slowHook struct {
	period time.Duration
	last   atomic.Int64
	slowed atomic.Int64
}

func (h *slowHook) stall(ctx context.Context) {
	if ctx.Done() == nil {
		return // the test's own reads
	}
	now := time.Now().UnixNano()
	if l := h.last.Load(); now-l < int64(h.period) || !h.last.CompareAndSwap(l, now) {
		return
	}
	h.slowed.Add(1)
	<-ctx.Done()
}

// TestGuardSlowRepliesUnderLoad runs a Guard on a healthy Redis, with the
// default timeout (50ms) and breaker, while spinning goroutines saturate
// the CPUs and a reply a second comes too late: each late reply makes
// only its own request the failure policy's, so every window of the rule
// (a sliding counter of 200 per second, counted in Redis's windows)
// admits within 5% of the limit, with fail open or closed. Only admissions
// whose whole Enter lies in a window count, so a loaded machine can only
// lower the counts. With a breaker that opened on one failure, fail open
// admitted every request for a second after each late reply.
//
// With the CPUs saturated, a goroutine runs tens or hundreds of
// milliseconds after its reply arrived. When the store waited the timeout
// only (and gave Redis's client that deadline), such replies failed: 46
// and 55 failed calls in 4s here, a window of 211.
//
// On a CPU so starved that 4s admit less than three windows' worth, the
// run goes on until they do, up to 32s: none of its windows was whole (4
// runs in 32, while a benchmark at a higher priority held both CPUs).
func TestGuardSlowRepliesUnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("8s under CPU saturation")
	}
	srv := redisstore.SharedRedis(t)
	const (
		limit      = 200
		goroutines = 8
		run        = 4 * time.Second
	)
	for _, policy := range []core.FailurePolicy{core.FailOpen, core.FailClosed} {
		t.Run(string(policy), func(t *testing.T) {
			prefix := redistest.UniquePrefix()
			c := srv.Client(t, func(o *redis.Options) { o.ContextTimeoutEnabled = true })
			slow := &slowHook{period: time.Second}
			slow.last.Store(time.Now().UnixNano())
			c.AddHook(redisstore.BeforeCommand(slow.stall))
			st, err := redisstore.New(c, redisstore.WithPrefix(prefix))
			require.NoError(t, err)
			rule := core.Rule{Name: "global", Resource: "GET /x", Kind: core.KindFlow, Limit: limit, Window: time.Second,
				Store: "redis", OnFailure: policy}
			g, err := core.New(core.WithStore("redis", st), core.WithRules(rule))
			require.NoError(t, err)
			t.Cleanup(func() {
				_ = g.Close()
				_ = st.Close()
			})
			// The sliding counter's windows in Redis follow each other
			// from its first request: "S P C", S the current one's start.
			// Read before the run: the key expires when no call reached
			// Redis for about a window, as may happen at the run's end on
			// a loaded host while the hook stalls a reply.
			// The first call may miss the 50ms timeout on a loaded host
			// (its script is loaded then) and be the failure policy's:
			// call until one has reached Redis.
			key := prefix + ":{global}:sc:1s"
			var v string
			require.Eventually(t, func() bool {
				e, _ := g.Enter(context.Background(), "GET /x")
				e.Exit(nil)
				v, err = c.Get(context.Background(), key).Result()
				return err == nil
			}, 10*time.Second, 10*time.Millisecond, "no request reached Redis")
			s, err := strconv.ParseInt(strings.Fields(v)[0], 10, 64)
			require.NoError(t, err)
			redistest.Saturate(t, 1)

			type span struct{ before, after int64 }
			admitted := make([][]span, goroutines)
			var wg sync.WaitGroup
			var n atomic.Int64
			start := time.Now()
			for i := range goroutines {
				wg.Go(func() {
					// On a CPU so starved that the run admitted less than
					// three windows' worth, on until it did (at most 8 runs).
					for el := time.Duration(0); el < run || n.Load() < 3*limit && el < 8*run; el = time.Since(start) {
						before := time.Now().UnixNano()
						e, err := g.Enter(context.Background(), "GET /x")
						after := time.Now().UnixNano()
						if err == nil {
							e.Exit(nil)
							admitted[i] = append(admitted[i], span{before, after})
							n.Add(1)
						}
					}
				})
			}
			wg.Wait()
			end, took := time.Now(), time.Since(start)
			stats := g.Stores()[0]
			w := int64(time.Second)
			counts := map[int64]int{} // by window start
			var first int64 = 1<<63 - 1
			for _, spans := range admitted {
				for _, sp := range spans {
					first = min(first, sp.before)
					k := s - ((s-sp.before)/w)*w // start of the window of before
					if sp.before < k {
						k -= w
					}
					if sp.after < k+w {
						counts[k]++
					}
				}
			}
			t.Logf("%s: %s, %d late replies, %d failed calls, %d fallbacks, recent latency %s; per window: %v", policy, took, slow.slowed.Load(), stats.Errors, stats.Fallbacks, stats.Modes[0].Latency, counts)
			require.NotZero(t, slow.slowed.Load())
			assert.True(t, stats.Healthy, "the breaker did not open, for failures nor for latency (core.WithStoreLatencyBudget): %v", stats.Modes[0].Err)
			assert.Equal(t, stats.Errors, stats.Fallbacks, "only requests whose own call failed were the policy's")
			checked := 0
			for k, n := range counts {
				if k <= first || k+w > end.UnixNano() {
					continue // not a whole window of the run
				}
				checked++
				assert.LessOrEqual(t, n, limit*105/100, "window at %d", k)
			}
			assert.NotZero(t, checked)
			assert.LessOrEqual(t, float64(stats.Fallbacks), 0.05*limit*took.Seconds(), "policy decisions: under 5%% of the limit")
		})
	}
}
