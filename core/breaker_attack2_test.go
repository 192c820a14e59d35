package core_test

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/clock"
)

// TestBreakerHugeOpenFor trips a breaker whose openFor is the largest
// duration a rules file takes: an operator's "stay open until I say". A
// Guard must either refuse the rule, naming openFor and its bound, or keep
// the tripped breaker open. Failed before openFor was bounded: open until
// now+openFor overflowed to the past, so the breaker went half-open at
// once and let the next request through.
func TestBreakerHugeOpenFor(t *testing.T) {
	for _, openFor := range []time.Duration{math.MaxInt64, 2562047 * time.Hour} {
		fc := clock.NewFake(time.Hour)
		r := core.Rule{Name: "b", Resource: "GET /x", Kind: core.KindBreaker,
			Strategy: "error-count", Threshold: 1, MinRequests: 1, OpenFor: openFor}
		g, err := core.New(core.WithClock(fc), core.WithRules(r))
		if err != nil {
			assert.ErrorContains(t, err, "openFor must be > 0 and <= 1250h59m59.627370496s (4503599627370496 ns), got "+openFor.String())
			continue
		}
		require.NoError(t, call(g, fc, "GET /x", 0, errFailed))
		fc.Advance(time.Second)
		assert.Error(t, call(g, fc, "GET /x", 0, nil), "openFor %s: the breaker tripped a second ago lets a request through", openFor)
		g.Close()
	}
}

// TestBreakerHugeWindow counts errors in the longest statistics window a
// rule takes: a breaker on error-count 2 must trip on the second error.
func TestBreakerHugeWindow(t *testing.T) {
	for _, w := range []time.Duration{math.MaxInt64, 2562047 * time.Hour} {
		fc := clock.NewFake(time.Hour)
		r := core.Rule{Name: "b", Resource: "GET /x", Kind: core.KindBreaker,
			Strategy: "error-count", Threshold: 2, MinRequests: 1, Window: w, Buckets: 1}
		g, err := core.New(core.WithClock(fc), core.WithRules(r))
		if err != nil {
			assert.ErrorContains(t, err, "window must be <=", "%s", w)
			continue
		}
		require.NoError(t, call(g, fc, "GET /x", 0, errFailed))
		fc.Advance(time.Second)
		require.NoError(t, call(g, fc, "GET /x", 0, errFailed))
		fc.Advance(time.Second)
		assert.Error(t, call(g, fc, "GET /x", 0, nil), "window %s: two errors do not trip error-count 2", w)
		g.Close()
	}
}
