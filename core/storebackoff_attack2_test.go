package core_test

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/clock"
)

// TestStoreBreakerHugeBackoff sets the store breaker's backoff to the
// largest duration, an operator's "leave a failed store alone": New must
// refuse it, naming the bound, or the open breaker must leave the store
// alone. Failed before the backoff was bounded: the breaker's reopening
// time now+backoff overflowed to the past, so every request after the trip
// probed the failed store (100 of 100 calls).
func TestStoreBreakerHugeBackoff(t *testing.T) {
	s := newScripted(t)
	fc := clock.NewFake(time.Hour)
	g, err := core.New(core.WithClock(fc), core.WithStore("shared", s), core.WithStoreBreaker(1, math.MaxInt64),
		core.WithRules(core.Rule{Name: "r", Resource: "x", Kind: core.KindFlow, Limit: 1 << 40, Window: time.Hour, Store: "shared", OnFailure: core.FailOpen}))
	if err != nil {
		assert.EqualError(t, err, "sluice: WithStoreBreaker: backoff must be <= 1h, got 2562047h47m16.854775807s")
		return
	}
	defer g.Close()
	s.fail.Store(true)
	enterX(t, g) // trips the breaker
	calls := s.calls.Load()
	for range 100 {
		fc.Advance(time.Millisecond)
		enterX(t, g)
	}
	assert.Equal(t, calls, s.calls.Load(), "calls to the store the open breaker made")
}
