package throttle_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core/clock"
	"github.com/sluicekit/sluice/core/throttle"
)

// arrivals is a way traffic arrives: burst calls at once, then a gap.
type arrivals struct {
	name  string
	gap   func(r *rand.Rand) time.Duration
	burst int
}

// poisson returns arrivals of rate calls per second at random (exponential gaps).
func poisson(rate float64) arrivals {
	mean := float64(time.Second) / rate
	return arrivals{fmt.Sprintf("poisson %g/s", rate), func(r *rand.Rand) time.Duration { return time.Duration(r.ExpFloat64() * mean) }, 1}
}

// bursts returns arrivals of n calls at once every gap.
func bursts(n int, gap time.Duration) arrivals {
	return arrivals{fmt.Sprintf("%d at once every %v", n, gap), func(*rand.Rand) time.Duration { return gap }, n}
}

// sentCall is a call of an arrivals simulation: when, and whether Allow sent it.
type sentCall struct {
	at   time.Duration
	sent bool
}

// simulate runs a default Throttle on the fake clock under a's traffic for
// until; the upstream accepts every call but those in [down, up).
func simulate(t *testing.T, a arrivals, seed uint64, down, up, until time.Duration) []sentCall {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 3))
	fc := clock.NewFake(0)
	th, err := throttle.New(fc, throttle.WithRandom(r.Float64))
	require.NoError(t, err)
	var calls []sentCall
	for now := time.Duration(0); now < until; {
		gap := a.gap(r)
		now += gap
		fc.Advance(gap)
		for range a.burst {
			ok := th.Allow("up") == nil
			if ok {
				th.Record("up", now < down || now >= up, 0)
			}
			calls = append(calls, sentCall{now, ok})
		}
	}
	return calls
}

// share returns the share of calls in (from, to] that were sent, and how many there were.
func share(calls []sentCall, from, to time.Duration) (float64, int) {
	n, s := 0, 0
	for _, c := range calls {
		if c.at > from && c.at <= to {
			n++
			if c.sent {
				s++
			}
		}
	}
	return float64(s) / float64(max(n, 1)), n
}

// TestRecoveryWhateverTheArrivals attacks the recovery promise with
// traffic that does not come one call per 10 ms: Poisson arrivals of 10,
// 100 and 1000 calls/s, bursts of 100 calls at once each second and of 10
// each 100 ms, after 2 minutes of accepted calls, through outages of 1 s
// to an hour. From 30 s after the upstream recovered, every 10 s sends at
// least 50% of its calls; from 2 minutes, at least 95%. Held on main at
// 4fe9240: each 10 s from the second on sent 100% (the first, 17-69%).
func TestRecoveryWhateverTheArrivals(t *testing.T) {
	const warm = 2 * time.Minute
	for _, a := range []arrivals{poisson(10), poisson(100), poisson(1000), bursts(100, time.Second), bursts(10, 100*time.Millisecond)} {
		for _, outage := range []time.Duration{time.Second, 30 * time.Second, 10 * time.Minute, time.Hour} {
			if outage == time.Hour && a.name == "poisson 1000/s" {
				continue // 3.6 million calls: the 10-minute outage says the same
			}
			for seed := uint64(1); seed <= 2; seed++ {
				up := warm + outage
				calls := simulate(t, a, seed, warm, up, up+3*time.Minute)
				for from := 30 * time.Second; from < 3*time.Minute; from += 10 * time.Second {
					s, n := share(calls, up+from, up+from+10*time.Second)
					want := 0.5
					if from >= 2*time.Minute {
						want = 0.95
					}
					assert.GreaterOrEqual(t, s, want, "%s, outage %v, seed %d: calls sent in the 10 s from %v after recovery (%d calls)", a.name, outage, seed, from, n)
				}
			}
		}
	}
}

// TestStillFailingWhateverTheArrivals: an upstream that keeps failing, for
// an hour after 2 minutes of accepted calls, gets at most 0.3% of the
// calls from the second minute of its outage on at 100 calls/s and more,
// in Poisson arrivals or bursts (about one call per window: at 10 calls/s
// that is 2.2%, logged, not asserted). Held on main at 4fe9240: 0.20-0.21%
// at 100 calls/s, 0.02% at 1000, 2.2% at 10.
func TestStillFailingWhateverTheArrivals(t *testing.T) {
	const warm = 2 * time.Minute
	for _, a := range []arrivals{poisson(10), poisson(100), poisson(1000), bursts(100, time.Second), bursts(10, 100*time.Millisecond)} {
		outage := time.Hour
		if a.name == "poisson 1000/s" {
			outage = 10 * time.Minute
		}
		calls := simulate(t, a, 1, warm, warm+outage+time.Second, warm+outage)
		s, n := share(calls, warm+time.Minute, warm+outage)
		t.Logf("%s: %.3f%% of %d calls sent to an upstream failing for %v, from its second minute on", a.name, 100*s, n, outage)
		if a.name != "poisson 10/s" {
			assert.LessOrEqual(t, s, 0.003, a.name)
		}
	}
}
