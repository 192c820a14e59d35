package core_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/breaker"
	"github.com/sluicekit/sluice/core/clock"
)

var errFailed = errors.New("handler failed")

// listen returns a Guard option that sends breaker events to a channel, and
// the channel.
func listen() (core.Option, chan core.BreakerEvent) {
	ch := make(chan core.BreakerEvent, 16)
	return core.WithBreakerListener(func(e core.BreakerEvent) { ch <- e }), ch
}

// nextEvent waits for the next breaker event.
func nextEvent(t *testing.T, ch chan core.BreakerEvent) core.BreakerEvent {
	t.Helper()
	select {
	case e := <-ch:
		return e
	case <-time.After(5 * time.Second):
		t.Fatal("no breaker event within 5s")
		return core.BreakerEvent{}
	}
}

// call enters resource, and exits with err after rt, or returns Enter's
// error.
func call(g *core.Guard, fc *clock.Fake, resource string, rt time.Duration, err error) error {
	e, enterErr := g.Enter(context.Background(), resource)
	if enterErr != nil {
		return enterErr
	}
	fc.Advance(rt)
	e.Exit(err)
	return nil
}

func TestBreakerOpensProbesAndCloses(t *testing.T) {
	opt, events := listen()
	fc := clock.NewFake(10 * time.Second)
	g, err := core.New(core.WithClock(fc), opt, core.WithRules(core.Rule{
		Name: "fail-breaker", Resource: "GET /fail", Kind: core.KindBreaker,
		Strategy: "error-ratio", Threshold: 0.5, MinRequests: 4, Window: 10 * time.Second, OpenFor: 5 * time.Second,
	}))
	require.NoError(t, err)
	defer g.Close()

	require.NoError(t, call(g, fc, "GET /fail", 0, nil))
	require.NoError(t, call(g, fc, "GET /fail", 0, errFailed))
	require.NoError(t, call(g, fc, "GET /fail", 0, nil))
	require.NoError(t, call(g, fc, "GET /other", 0, errFailed)) // another resource: not watched
	require.NoError(t, call(g, fc, "GET /fail", 0, errFailed))  // 2 of 4: trips

	ev := nextEvent(t, events)
	assert.Equal(t, "fail-breaker", ev.Rule)
	assert.Equal(t, "GET /fail", ev.Resource)
	assert.Equal(t, breaker.Closed, ev.From)
	assert.Equal(t, breaker.Open, ev.To)
	assert.Equal(t, int64(4), ev.Requests)
	assert.Equal(t, int64(2), ev.Bad)
	assert.Contains(t, ev.Reason, "error ratio 0.5")

	fc.Advance(2 * time.Second)
	err = call(g, fc, "GET /fail", 0, nil)
	b := blockedBy(t, err)
	assert.Equal(t, core.BlockedError{Resource: "GET /fail", Rule: "fail-breaker", Kind: core.KindBreaker, RetryAfter: 3 * time.Second}, core.WithoutClass(*b))
	assert.Equal(t, 503, b.Class().Status)
	assert.Equal(t, string(core.KindBreaker), b.Reason())
	assert.Contains(t, b.Error(), "circuit open")

	// Half-open: one probe; a second request while it is out is blocked.
	fc.Advance(3 * time.Second)
	probe, err := g.Enter(context.Background(), "GET /fail")
	require.NoError(t, err)
	assert.Equal(t, breaker.HalfOpen, nextEvent(t, events).To)
	_, err = g.Enter(context.Background(), "GET /fail")
	blockedBy(t, err)
	probe.Exit(nil)
	ev = nextEvent(t, events)
	assert.Equal(t, breaker.HalfOpen, ev.From)
	assert.Equal(t, breaker.Closed, ev.To)
	require.NoError(t, call(g, fc, "GET /fail", 0, errFailed), "closed again, with fresh statistics")

	snap := g.Snapshot()
	require.Len(t, snap.Rules, 1)
	rs := snap.Rules[0]
	require.NotNil(t, rs.Breaker)
	assert.Equal(t, breaker.Closed, rs.Breaker.State)
	assert.Equal(t, int64(1), rs.Breaker.Trips)
	assert.Equal(t, int64(1), rs.Breaker.Requests)
	assert.Equal(t, int64(2), rs.BlockedTotal)
}

func TestBreakerSlowRatioMeasuresResponseTime(t *testing.T) {
	g, fc := newGuard(t, core.Rule{
		Resource: "GET /slow", Kind: core.KindBreaker,
		Strategy: "slow-ratio", Threshold: 1, MaxRT: 100 * ms, MinRequests: 3,
	})
	for i := range 3 {
		require.NoError(t, call(g, fc, "GET /slow", 150*ms, nil), "request %d", i)
	}
	b := blockedBy(t, call(g, fc, "GET /slow", 0, nil))
	assert.Equal(t, core.DefaultName(core.Rule{Kind: core.KindBreaker, Resource: "GET /slow"}), b.Rule)
	assert.Equal(t, 5*time.Second, b.RetryAfter, "the default OpenFor")
}

// TestBreakerProbeGivenBackWhenALaterRuleRejects: a probe the breaker let
// through but a flow rule rejected does not count; the next request is
// the probe.
func TestBreakerProbeGivenBackWhenALaterRuleRejects(t *testing.T) {
	g, fc := newGuard(t,
		core.Rule{Name: "rate", Resource: "GET /x", Kind: core.KindFlow, Limit: 1, Window: 10 * time.Second, Buckets: 1},
		core.Rule{Name: "brk", Resource: "GET /x", Kind: core.KindBreaker, Strategy: "error-count", Threshold: 1, MinRequests: 1, OpenFor: time.Second},
	)
	require.NoError(t, call(g, fc, "GET /x", 0, errFailed)) // takes the flow rule's one permit, trips the breaker
	fc.Advance(time.Second)
	b := blockedBy(t, call(g, fc, "GET /x", 0, nil))
	assert.Equal(t, "rate", b.Rule, "the breaker let the probe through, the flow rule rejected it")
	b = blockedBy(t, call(g, fc, "GET /x", 0, nil))
	assert.Equal(t, "rate", b.Rule, "the probe was given back: the breaker lets the next request through again")
	fc.Advance(9 * time.Second) // the flow window passes; the probe deadline too, but no probe is out
	require.NoError(t, call(g, fc, "GET /x", 0, nil))
	assert.Equal(t, breaker.Closed, g.Snapshot().Rules[1].Breaker.State)
}

func TestBreakerStateSurvivesReload(t *testing.T) {
	rule := core.Rule{Name: "brk", Resource: "GET /x", Kind: core.KindBreaker, Strategy: "error-count", Threshold: 1, MinRequests: 1, OpenFor: 10 * time.Second}
	g, fc := newGuard(t, rule)
	require.NoError(t, call(g, fc, "GET /x", 0, errFailed))
	rule.Threshold = 5 // changed, but the same name, kind and resource
	require.NoError(t, g.SetRules([]core.Rule{rule, {Resource: "*", Kind: core.KindConcurrency, Limit: 10}}))
	fc.Advance(time.Second)
	b := blockedBy(t, call(g, fc, "GET /x", 0, nil))
	assert.Equal(t, 9*time.Second, b.RetryAfter)
	assert.Equal(t, int64(1), g.Snapshot().Rules[0].BlockedTotal)
}

func TestSnapshot(t *testing.T) {
	g, fc := newGuard(t,
		core.Rule{Name: "rate", Resource: "GET /a", Kind: core.KindFlow, Limit: 2},
		core.Rule{Name: "inflight", Resource: "GET /*", Kind: core.KindConcurrency, Limit: 1},
	)
	ctx := context.Background()
	e, err := g.Enter(ctx, "GET /b")
	require.NoError(t, err)
	blockedBy(t, call(g, fc, "GET /a", 0, nil)) // the one slot is taken
	fc.Advance(10 * ms)
	e.Exit(errFailed)
	require.NoError(t, call(g, fc, "GET /a", 30*ms, nil))
	require.NoError(t, call(g, fc, "GET /a", 0, nil))
	blockedBy(t, call(g, fc, "GET /a", 0, nil)) // over the rate

	s := g.Snapshot()
	assert.Equal(t, fc.Now(), s.At)
	require.Len(t, s.Resources, 2)
	a, b := s.Resources[0], s.Resources[1]
	assert.Equal(t, "GET /a", a.Resource)
	assert.Equal(t, int64(2), a.Pass)
	assert.Equal(t, int64(2), a.Block)
	assert.Equal(t, core.Totals{Pass: 2, Block: 2, Complete: 2, RT: 30 * ms,
		RTHistogram: core.RTHistogram{0: 1, 12: 1}, // 0 and 30ms, in (2^-6 s, 2^-5 s]
		BlockedBy:   map[string]int64{string(core.KindFlow): 1, string(core.KindConcurrency): 1}}, a.Total)
	assert.Equal(t, 30*ms, a.RT)
	assert.Equal(t, int64(2), a.Complete)
	assert.Equal(t, "GET /b", b.Resource)
	assert.Equal(t, core.Totals{Pass: 1, Complete: 1, Error: 1, RT: 10 * ms, RTHistogram: core.RTHistogram{11: 1}}, b.Total)

	require.Len(t, s.Rules, 2)
	assert.Equal(t, "rate", s.Rules[0].Rule.Name)
	assert.Equal(t, int64(1), s.Rules[0].Blocked)
	assert.Equal(t, int64(1), s.Rules[0].BlockedTotal)
	assert.Equal(t, int64(1), s.Rules[1].BlockedTotal)
	assert.Nil(t, s.Rules[0].Breaker)

	// Last-second counts leave the window; totals stay.
	fc.Advance(2 * time.Second)
	s = g.Snapshot()
	assert.Zero(t, s.Resources[0].Pass)
	assert.Zero(t, s.Rules[0].Blocked)
	assert.Equal(t, int64(2), s.Resources[0].Total.Pass)
	assert.Equal(t, int64(1), s.Rules[0].BlockedTotal)

	// In flight per concurrency rule.
	e, err = g.Enter(ctx, "GET /b")
	require.NoError(t, err)
	assert.Equal(t, int64(1), g.Snapshot().Rules[1].InFlight)
	e.Exit(nil)
	assert.Zero(t, g.Snapshot().Rules[1].InFlight)
}

func TestWithBreakerListenerAndLoggerValidate(t *testing.T) {
	_, err := core.New(core.WithBreakerListener(nil))
	assert.ErrorContains(t, err, "WithBreakerListener: listener is nil")
	_, err = core.New(core.WithLogger(nil))
	assert.ErrorContains(t, err, "WithLogger: logger is nil")
}

// TestEveryBreakerOfAResourceHearsOutcomes: with two breakers on a
// resource, the second one (its ticket kept apart from the first's) trips.
func TestEveryBreakerOfAResourceHearsOutcomes(t *testing.T) {
	g, fc := newGuard(t,
		core.Rule{Name: "lenient", Resource: "GET /*", Kind: core.KindBreaker, Strategy: "error-count", Threshold: 100, MinRequests: 1},
		core.Rule{Name: "strict", Resource: "GET /x", Kind: core.KindBreaker, Strategy: "error-count", Threshold: 2, MinRequests: 1},
	)
	require.NoError(t, call(g, fc, "GET /x", 0, errFailed))
	require.NoError(t, call(g, fc, "GET /x", 0, errFailed))
	b := blockedBy(t, call(g, fc, "GET /x", 0, nil))
	assert.Equal(t, "strict", b.Rule)
	require.NoError(t, call(g, fc, "GET /y", 0, nil), "the lenient breaker stays closed")
	s := g.Snapshot()
	assert.Equal(t, int64(3), s.Rules[0].Breaker.Requests)
	assert.Equal(t, int64(2), s.Rules[0].Breaker.Bad)
}
