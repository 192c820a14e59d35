package core_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core"
)

// hintRules are a flow rule of 3 per second and a per-user token bucket
// of 1 per 10s on one resource: the per-user rule's wait is the longer.
func hintRules() []core.Rule {
	return []core.Rule{
		{Name: "items-rate", Resource: "GET /items/{id}", Kind: core.KindFlow, Limit: 3, Window: time.Second},
		{Name: "per-user", Resource: "GET /items/{id}", Kind: core.KindHotspot, Param: "header:X-User-ID", Limit: 1, Window: 10 * time.Second},
	}
}

func user(v string) core.EnterOption {
	return core.WithParams(core.ParamMap{"header:X-User-ID": {v}})
}

// violated returns the names of the rules that rejected the request of b.
func violated(b *core.BlockedError) []string {
	var out []string
	for _, p := range b.Policies {
		if p.Blocked {
			out = append(out, p.Rule)
		}
	}
	return out
}

// TestRetryHintIsLatestOfRejectingRules: when the flow rule and the
// per-user rule both reject a request, the retry time is the per-user
// rule's (the later): a client that waits exactly that long passes, and one
// that waits a nanosecond less is refused. Before, the first rejecting
// rule's hint (the flow rule's, under a second) was given.
func TestRetryHintIsLatestOfRejectingRules(t *testing.T) {
	g, fc := newGuard(t, hintRules()...)
	ctx := context.Background()
	for _, u := range []string{"alice", "bob", "carol"} {
		e, err := g.Enter(ctx, "GET /items/{id}", user(u))
		require.NoError(t, err, u)
		e.Exit(nil)
	}
	fc.Advance(100 * ms)
	_, err := g.Enter(ctx, "GET /items/{id}", user("alice"))
	b := blockedBy(t, err)
	assert.Equal(t, "per-user", b.Rule, "the rule with the latest retry time decides")
	assert.Equal(t, core.KindHotspot, b.Kind)
	assert.Equal(t, "header:X-User-ID", b.Param)
	assert.Equal(t, 9900*ms, b.RetryAfter)
	assert.False(t, b.Never)
	assert.Equal(t, []core.Quota{
		{Rule: "items-rate", Limit: 3, Window: time.Second, Remaining: 0, Reset: 900 * ms, Blocked: true},
		{Rule: "per-user", Limit: 1, Window: 10 * time.Second, Remaining: 0, Reset: 9900 * ms, Blocked: true},
	}, b.Policies)
	assert.Contains(t, b.Error(), `also rejected by "items-rate"`)

	fc.Advance(b.RetryAfter - 1)
	_, err = g.Enter(ctx, "GET /items/{id}", user("alice"))
	require.ErrorIs(t, err, core.ErrBlocked, "a nanosecond early")
	fc.Advance(1)
	e, err := g.Enter(ctx, "GET /items/{id}", user("alice"))
	require.NoError(t, err, "a client that waits as told passes")
	e.Exit(nil)

	// Each rule counted the requests it rejected: the flow rule's window
	// had passed at the second.
	snap := g.Snapshot()
	require.Len(t, snap.Rules, 2)
	assert.Equal(t, int64(1), snap.Rules[0].BlockedTotal)
	assert.Equal(t, int64(2), snap.Rules[1].BlockedTotal)
}

// TestRejectedRequestTakesNothing: the rules asked after a rejection keep
// nothing of the request: the flow rule's permits, the concurrency rule's
// slots and the per-user buckets of other rules are as they were, however
// many requests were rejected.
func TestRejectedRequestTakesNothing(t *testing.T) {
	rules := []core.Rule{
		{Name: "per-user", Resource: "r", Kind: core.KindHotspot, Param: "header:X-User-ID", Limit: 1, Window: time.Hour},
		{Name: "rate", Resource: "r", Kind: core.KindFlow, Limit: 5, Window: time.Second},
		{Name: "per-tenant", Resource: "r", Kind: core.KindHotspot, Param: "query:tenant", Limit: 5, Window: time.Hour},
		{Name: "in-flight", Resource: "r", Kind: core.KindConcurrency, Limit: 5},
	}
	g, _ := newGuard(t, rules...)
	ctx := context.Background()
	params := func(u string) core.EnterOption {
		return core.WithParams(core.ParamMap{"header:X-User-ID": {u}, "query:tenant": {"t1"}})
	}
	e, err := g.Enter(ctx, "r", params("alice"))
	require.NoError(t, err)
	e.Exit(nil)
	for range 100 {
		_, err := g.Enter(ctx, "r", params("alice"))
		b := blockedBy(t, err)
		assert.Equal(t, []string{"per-user"}, violated(b))
		require.Len(t, b.Policies, 3, "every rate rule, not the concurrency rule that admitted")
		assert.Equal(t, core.Quota{Rule: "rate", Limit: 5, Window: time.Second, Remaining: 4, Reset: time.Second}, b.Policies[1],
			"the quota left before the request, whose permit was given back")
		assert.Equal(t, "per-tenant", b.Policies[2].Rule)
		assert.Equal(t, int64(4), b.Policies[2].Remaining)
	}
	for _, u := range []string{"bob", "carol", "dave", "erin"} {
		e, err := g.Enter(ctx, "r", params(u))
		require.NoError(t, err, "%s: the rejected requests took nothing", u)
		defer e.Exit(nil)
	}
	snap := g.Snapshot()
	assert.Equal(t, int64(4), snap.Rules[3].InFlight)
	assert.Zero(t, snap.Rules[1].BlockedTotal, "a rule that admitted counts no block")
	assert.Equal(t, int64(100), snap.Rules[0].BlockedTotal)
}

// TestNeverPasses: a request that no wait can let through is marked Never,
// with no retry time, whichever rule is first and whatever the others say.
func TestNeverPasses(t *testing.T) {
	ctx := context.Background()
	t.Run("value overridden to 0", func(t *testing.T) {
		rules := hintRules()
		rules[1].Overrides = map[string]int64{"banned": 0}
		g, _ := newGuard(t, rules...)
		for _, u := range []string{"a", "b", "c"} {
			e, err := g.Enter(ctx, "GET /items/{id}", user(u))
			require.NoError(t, err)
			e.Exit(nil)
		}
		// The flow rule rejects first, with a retry time; the per-user
		// rule never admits the value.
		_, err := g.Enter(ctx, "GET /items/{id}", user("banned"))
		b := blockedBy(t, err)
		assert.True(t, b.Never)
		assert.Zero(t, b.RetryAfter)
		assert.Equal(t, "per-user", b.Rule)
		assert.Zero(t, b.Limit)
		assert.Equal(t, []string{"items-rate", "per-user"}, violated(b))
		assert.Contains(t, b.Error(), "will never pass")
	})
	t.Run("cost above capacity", func(t *testing.T) {
		g, _ := newGuard(t,
			core.Rule{Name: "bucket", Resource: "b", Kind: core.KindFlow, Algorithm: "token-bucket", Limit: 4, Burst: 2},
			core.Rule{Name: "window", Resource: "w", Kind: core.KindFlow, Limit: 5},
			core.Rule{Name: "paced", Resource: "p", Kind: core.KindFlow, Algorithm: "leaky-bucket", Limit: 5, MaxWait: time.Second},
			core.Rule{Name: "slots", Resource: "c", Kind: core.KindConcurrency, Limit: 2},
			core.Rule{Name: "nothing", Resource: "z", Kind: core.KindFlow, Limit: 0},
			core.Rule{Name: "per-user", Resource: "u", Kind: core.KindHotspot, Param: "header:X-User-ID", Limit: 3, Burst: 1},
		)
		for _, c := range []struct {
			resource string
			most     int64 // the largest count that may pass
		}{{"b", 6}, {"w", 5}, {"p", 5}, {"c", 2}, {"z", 0}, {"u", 4}} {
			_, err := g.Enter(ctx, c.resource, core.WithCount(c.most+1), user("alice"))
			b := blockedBy(t, err)
			assert.True(t, b.Never, "%s: %d", c.resource, c.most+1)
			assert.Zero(t, b.RetryAfter, c.resource)
			if c.most == 0 {
				continue
			}
			e, err := g.Enter(ctx, c.resource, core.WithCount(c.most), user("alice"))
			require.NoError(t, err, "%s: %d fits", c.resource, c.most)
			e.Exit(nil)
			if c.resource == "c" || c.resource == "p" {
				continue // slots are back; a leaky bucket would queue it
			}
			_, err = g.Enter(ctx, c.resource, core.WithCount(c.most), user("alice"))
			b = blockedBy(t, err)
			assert.False(t, b.Never, "%s: %d only waits", c.resource, c.most)
			assert.Positive(t, b.RetryAfter, c.resource)
		}
	})
}

// TestQuotaPolicyConsistent: the policy of a rule never shows more quota
// left than its limit: a token bucket's burst is in its limit (over the
// time the bucket takes to refill it), and a warming-up rule advertises its
// configured limit while the limit in force ramps up.
func TestQuotaPolicyConsistent(t *testing.T) {
	g, fc := newGuard(t,
		core.Rule{Name: "bucket", Resource: "b", Kind: core.KindFlow, Algorithm: "token-bucket", Limit: 10, Burst: 5},
		core.Rule{Name: "warm", Resource: "w", Kind: core.KindFlow, Limit: 90, Warmup: 10 * time.Second},
		core.Rule{Name: "warm-bucket", Resource: "wb", Kind: core.KindFlow, Algorithm: "token-bucket", Limit: 90, Warmup: 10 * time.Second},
	)
	ctx := context.Background()
	var qs []core.Quota
	e, err := g.Enter(ctx, "b", core.WithQuotas(&qs))
	require.NoError(t, err)
	q, ok := leastQuota(qs)
	require.True(t, ok)
	e.Exit(nil)
	assert.Equal(t, core.Quota{Rule: "bucket", Limit: 15, Window: 1500 * ms, Remaining: 14, Reset: 100 * ms}, q)

	for _, res := range []string{"w", "wb"} {
		for step := range 40 {
			var qs []core.Quota
			e, err := g.Enter(ctx, res, core.WithQuotas(&qs))
			var q core.Quota
			if err == nil {
				q, ok = leastQuota(qs)
				require.True(t, ok)
				e.Exit(nil)
			} else {
				b := blockedBy(t, err)
				require.Len(t, b.Policies, 1)
				q = b.Policies[0]
				assert.Equal(t, b.Limit, q.Limit)
			}
			assert.Equal(t, int64(90), q.Limit, "%s step %d: the configured limit", res, step)
			assert.LessOrEqual(t, q.Remaining, q.Limit, "%s step %d", res, step)
			assert.GreaterOrEqual(t, q.Remaining, int64(0))
			fc.Advance(5 * ms)
		}
	}
}

// TestWithQuotas: an admitted request's quota policies, one per rate rule
// that admitted it, in rule order; a hotspot rule limiting two values of
// the request gives the one with the least quota left; concurrency rules
// have none.
func TestWithQuotas(t *testing.T) {
	g, _ := newGuard(t,
		core.Rule{Name: "rate", Resource: "r", Kind: core.KindFlow, Limit: 10},
		core.Rule{Name: "in-flight", Resource: "r", Kind: core.KindConcurrency, Limit: 5},
		core.Rule{Name: "per-user", Resource: "r", Kind: core.KindHotspot, Param: "header:X-User-ID", Limit: 3, Window: time.Minute},
		core.Rule{Name: "single", Resource: "s", Kind: core.KindFlow, Limit: 4},
	)
	ctx := context.Background()
	e, err := g.Enter(ctx, "r", core.WithParams(core.ParamMap{"header:X-User-ID": {"alice"}}))
	require.NoError(t, err)
	e.Exit(nil)
	var qs []core.Quota
	e, err = g.Enter(ctx, "r", core.WithParams(core.ParamMap{"header:X-User-ID": {"alice", "bob"}}), core.WithQuotas(&qs))
	require.NoError(t, err)
	e.Exit(nil)
	assert.Equal(t, []core.Quota{
		{Rule: "rate", Limit: 10, Window: time.Second, Remaining: 8, Reset: time.Second},
		{Rule: "per-user", Limit: 3, Window: time.Minute, Remaining: 1, Reset: 40 * time.Second},
	}, qs, "alice's bucket, the emptier")

	qs = qs[:0]
	e, err = g.Enter(ctx, "s", core.WithQuotas(&qs))
	require.NoError(t, err)
	e.Exit(nil)
	assert.Equal(t, []core.Quota{{Rule: "single", Limit: 4, Window: time.Second, Remaining: 3, Reset: time.Second}}, qs, "the one-rule path")
}

// TestLastAdmittedHintMatchesNextBlock: the quota policy of the request
// that empties a bucket tells, as Reset, when the next request would be
// admitted: the RetryAfter (and the policy's Reset) of a request rejected
// right after it, not the time the whole bucket takes to refill. Per-user
// (hotspot) and flow token buckets, with and without burst, requests at
// once and spread, and leaky buckets. Before, a per-user bucket of 2 per
// 10s emptied at once said 10s on its last admission and 5s on the block
// after it.
func TestLastAdmittedHintMatchesNextBlock(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name string
		rule core.Rule
		gaps []time.Duration // before each request until one empties the bucket
	}{
		{"per-user at once", core.Rule{Kind: core.KindHotspot, Param: "header:X-User-ID", Limit: 2, Window: 10 * time.Second}, nil},
		{"per-user spread", core.Rule{Kind: core.KindHotspot, Param: "header:X-User-ID", Limit: 2, Window: 10 * time.Second}, []time.Duration{1234 * ms, 3 * time.Second}},
		{"per-user burst", core.Rule{Kind: core.KindHotspot, Param: "header:X-User-ID", Limit: 3, Window: time.Minute, Burst: 2}, []time.Duration{0, 7 * time.Second, 0, 11*time.Second + 7}},
		{"per-user leaky", core.Rule{Kind: core.KindHotspot, Param: "header:X-User-ID", Algorithm: "leaky-bucket", Limit: 2, Window: 10 * time.Second, MaxWait: 2 * time.Second}, nil},
		{"flow token bucket", core.Rule{Kind: core.KindFlow, Algorithm: "token-bucket", Limit: 3, Window: 10 * time.Second}, []time.Duration{0, 2 * time.Second}},
		{"flow leaky", core.Rule{Kind: core.KindFlow, Algorithm: "leaky-bucket", Limit: 4, Window: 10 * time.Second, MaxWait: time.Second}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.rule.Name, c.rule.Resource = "r", "r"
			g, fc := newGuard(t, c.rule)
			var last core.Quota
			for i := 0; ; i++ {
				require.Less(t, i, 20, "never rejected")
				if i < len(c.gaps) {
					fc.Advance(c.gaps[i])
				}
				var qs []core.Quota
				e, err := g.Enter(ctx, "r", user("alice"), core.WithQuotas(&qs))
				require.NoError(t, err, "request %d", i)
				e.Exit(nil)
				require.Len(t, qs, 1)
				if last = qs[0]; last.Remaining > 0 {
					continue
				}
				_, err = g.Enter(ctx, "r", user("alice")) // right after it
				b := blockedBy(t, err)
				assert.Equal(t, b.RetryAfter, last.Reset, "the last admission's Reset is the next block's RetryAfter")
				require.Len(t, b.Policies, 1)
				assert.Equal(t, b.RetryAfter, b.Policies[0].Reset)
				// A client that waits as told is admitted (a leaky bucket's
				// request then waits for its slot: with a done context, it
				// is admitted and gives up, not blocked).
				fc.Advance(b.RetryAfter)
				done, cancel := context.WithCancel(ctx)
				cancel()
				e, err = g.Enter(done, "r", user("alice"))
				require.NotErrorIs(t, err, core.ErrBlocked, "a client that waits as told passes")
				if err == nil {
					e.Exit(nil)
				}
				return
			}
		})
	}
}

// TestLastAdmittedHintAfterWait: a per-user leaky bucket's request that
// waits for its slot and leaves no quota tells, as Reset, the time from
// when it proceeds to when the next request would be admitted: the
// RetryAfter of a request rejected at that moment. 2 per 10s (a slot every
// 5s) with MaxWait 2s: the request at 4s waits 1s for the slot at 5s, and
// at 5s the next slot, at 10s, comes within MaxWait 3s later.
func TestLastAdmittedHintAfterWait(t *testing.T) {
	g, fc := newGuard(t, core.Rule{Name: "r", Resource: "r", Kind: core.KindHotspot, Param: "header:X-User-ID",
		Algorithm: "leaky-bucket", Limit: 2, Window: 10 * time.Second, MaxWait: 2 * time.Second})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second) // failure timeout only
	defer cancel()
	start := fc.Now()
	e, err := g.Enter(ctx, "r", user("alice"))
	require.NoError(t, err)
	e.Exit(nil)
	fc.Set(start + 4*time.Second)
	var qs []core.Quota
	done := make(chan error, 1)
	go func() {
		e, err := g.Enter(ctx, "r", user("alice"), core.WithQuotas(&qs))
		if err == nil {
			e.Exit(nil)
		}
		done <- err
	}()
	require.NoError(t, fc.WaitForSleepers(ctx, 1))
	fc.Set(start + 5*time.Second)
	require.NoError(t, <-done)
	require.Len(t, qs, 1)
	_, err = g.Enter(ctx, "r", user("alice"))
	b := blockedBy(t, err)
	assert.Equal(t, 3*time.Second, b.RetryAfter)
	assert.Equal(t, core.Quota{Rule: "r", Limit: 2, Window: 10 * time.Second, Remaining: 0, Reset: b.RetryAfter}, qs[0])
}
