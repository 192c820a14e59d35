package core

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core/internal/loadtest"
)

// The tests of this file check limits against real time on a host whose
// CPUs are saturated by busy goroutines, where a clock that a goroutine
// advances runs late (Guards decided on one, then timed requests on it).
// Each admission is known only to have been decided at some instant of
// [before, after] of its Enter call; an interval of real time counts the
// admissions whose whole span lies inside it. A late test goroutine only
// widens spans, so load can only make these checks pass more easily, never
// fail.

// span is the real time, since the test's start, of one admitted Enter call.
type span struct{ before, after time.Duration }

// maxInside returns the largest number of spans that lie inside one
// half-open interval [x, x+d) of real time.
func maxInside(spans []span, d time.Duration) int {
	slices.SortFunc(spans, func(a, b span) int { return int(a.before - b.before) })
	best := 0
	for i, s := range spans {
		n := 0
		for _, o := range spans[i:] {
			if o.before >= s.before+d {
				break
			}
			if o.after < s.before+d {
				n++
			}
		}
		best = max(best, n)
	}
	return best
}

// starvations are the ways the tests below make a goroutine's clock late.
var starvations = []struct {
	name  string
	apply func(t *testing.T, g *Guard)
}{
	{"busy host", func(t *testing.T, _ *Guard) { loadtest.Saturate(t, 2) }},
}

// TestLimitsHoldInRealTimeOnLateClock: no rule admits more than its bound
// in an interval of real time, however late a goroutine runs. Before
// rules decided on the monotonic clock, a sliding log of 40 per 400ms
// admitted about 80 within 400ms of real time with ticks held back.
func TestLimitsHoldInRealTimeOnLateClock(t *testing.T) {
	const (
		limit = 40
		win   = 400 * time.Millisecond
	)
	rules := []struct {
		rule Rule
		// bound is the most the rule may admit within any real interval
		// of length over.
		over  time.Duration
		bound int
		// The client sends a request every millisecond from each of two
		// goroutines for on, then pauses for off: a token bucket breaks
		// its bound only when it was full, so the client lets it fill.
		on, off time.Duration
	}{
		// Exact: at most limit in any window.
		{Rule{Algorithm: "sliding-log"}, win, limit, time.Hour, 0},
		// Any limit consecutive buckets hold at most limit: that covers
		// every interval one bucket shorter than the window.
		{Rule{Algorithm: "leap-array", Buckets: 8}, win - win/8, limit, time.Hour, 0},
		// A bucket of capacity limit+burst refilling limit per window
		// admits at most capacity + d*limit/win within d.
		{Rule{Algorithm: "token-bucket", Burst: 10}, win / 2, limit + 10 + limit/2, 250 * time.Millisecond, 550 * time.Millisecond},
	}
	for _, st := range starvations {
		for _, r := range rules {
			t.Run(st.name+"/"+string(r.rule.Algorithm), func(t *testing.T) {
				rule := r.rule
				rule.Resource, rule.Kind, rule.Limit, rule.Window = "r", KindFlow, limit, win
				g, err := New(WithRules(rule))
				require.NoError(t, err)
				defer g.Close()
				st.apply(t, g)
				spans := hammer(t, g, time.Second, r.on, r.off)
				require.NotEmpty(t, spans)
				got := maxInside(spans, r.over)
				t.Logf("%d admitted; at most %d within %s of real time (bound %d)", len(spans), got, r.over, r.bound)
				assert.LessOrEqual(t, got, r.bound, "admitted within %s of real time", r.over)
			})
		}
	}
}

// hammer enters "r" from two goroutines for about dur, each sending a
// request every millisecond for on, then pausing for off, and returns the
// spans of the admitted ones.
func hammer(t *testing.T, g *Guard, dur, on, off time.Duration) []span {
	t.Helper()
	ctx := context.Background()
	base := time.Now()
	var mu sync.Mutex
	var spans []span
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			var mine []span
			for time.Since(base) < dur {
				for end := time.Since(base) + on; time.Since(base) < min(end, dur); {
					before := time.Since(base)
					e, err := g.Enter(ctx, "r")
					if err == nil {
						mine = append(mine, span{before, time.Since(base)})
						e.Exit(nil)
					}
					time.Sleep(time.Millisecond)
				}
				time.Sleep(off)
			}
			mu.Lock()
			spans = append(spans, mine...)
			mu.Unlock()
		})
	}
	wg.Wait()
	return spans
}

// TestRetryHintNeverEarlyOnLateClock: a client that waits exactly the
// RetryAfter of its rejection is admitted (nobody else takes the quota),
// however late a goroutine runs. Before rules decided on the monotonic
// clock, about half of such retries were rejected with ticks held back.
func TestRetryHintNeverEarlyOnLateClock(t *testing.T) {
	for _, st := range starvations {
		for _, alg := range []Algorithm{AlgorithmSlidingLog, AlgorithmLeapArray, AlgorithmTokenBucket} {
			t.Run(st.name+"/"+string(alg), func(t *testing.T) {
				g, err := New(WithRules(Rule{Resource: "r", Kind: KindFlow, Algorithm: alg, Limit: 5, Window: 100 * time.Millisecond}))
				require.NoError(t, err)
				defer g.Close()
				st.apply(t, g)
				ctx := context.Background()
				for i := range 6 {
					var be *BlockedError
					for {
						e, err := g.Enter(ctx, "r")
						if err != nil {
							require.True(t, errors.As(err, &be), "%v", err)
							break
						}
						e.Exit(nil)
					}
					require.Positive(t, be.RetryAfter)
					time.Sleep(be.RetryAfter)
					e, err := g.Enter(ctx, "r")
					require.NoError(t, err, fmt.Sprintf("retry %d after waiting RetryAfter %s", i, be.RetryAfter))
					e.Exit(nil)
				}
			})
		}
	}
}
