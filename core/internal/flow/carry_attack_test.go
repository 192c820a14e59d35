package flow

import (
	"math/big"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestReloadChainsKeepTheDebt spends token and leaky buckets of random
// shapes (limits of 1 to 1e9, windows of 1ns to MaxSpan/2, fractions of a
// nanosecond, bursts, waits), reloads each through a chain of 1 to 4 other
// random shapes at one instant (Reload), and counts what then passes at
// once: never more than the last shape's capacity less the requests owed
// at the first reload (as many as the TAT ahead of now holds, rounded up
// at each step, capped only at MaxSpan), a leaky bucket's capacity being its MaxWait's
// requests and one. Before the fix, a TAT less than a nanosecond ahead of
// now (a bucket of a few nanoseconds per request) was not converted: the
// next shape read it as 1ns, and most of a request owed was lost (case
// 4073: 48 passed where 47 may).
func TestReloadChainsKeepTheDebt(t *testing.T) {
	r := rand.New(rand.NewPCG(27, 27))
	windows := []time.Duration{1, 3, 7, 1000, 97 * time.Millisecond, 1300 * time.Millisecond, time.Second, time.Minute, MaxSpan / 2}
	random := func() Config {
		c := Config{Limit: 1 + r.Int64N(40), Window: windows[r.IntN(len(windows))]}
		if r.IntN(3) == 0 {
			c.Limit = 1 + r.Int64N(1e9)
		}
		if r.IntN(2) == 0 {
			c.Algorithm, c.Burst = TokenBucket, r.Int64N(20)
		} else {
			c.Algorithm, c.MaxWait = LeakyBucket, time.Duration(r.Int64N(int64(c.Window)*3))
		}
		return c
	}
	rat := func(n, d int64) *big.Rat { return new(big.Rat).SetFrac(big.NewInt(n), big.NewInt(d)) }
	for i := range 20000 {
		first := random()
		l, err := New(first, nil)
		if err != nil {
			continue // a shape Config refuses
		}
		const T = int64(1 << 40)
		spend := r.Int64N(60)
		for range spend {
			l.Acquire(T, 1)
		}
		now := T + r.Int64N(int64(first.Window)*2+1)
		st := l.(*gcra).st
		den := max(st.den, 1)
		debt := new(big.Rat).Add(rat(st.tat.Load()-now, 1), rat(st.frac, den)) // the TAT ahead of now
		if debt.Sign() < 0 {
			debt.SetInt64(0)
		}
		debt.Mul(debt, rat(first.Limit, int64(first.Window))) // in requests
		chain := []Config{first}
		var most *big.Rat // what may pass at once after the last reload
		for range 1 + r.IntN(4) {
			next := random()
			n, err := Reload(next, l, now)
			if err != nil {
				continue
			}
			l, chain = n, append(chain, next)
			if span := new(big.Rat).Mul(rat(int64(MaxSpan), 1), rat(next.Limit, int64(next.Window))); debt.Cmp(span) > 0 {
				debt = span // a TAT stays within MaxSpan of now
			}
			if next.Algorithm == TokenBucket {
				most = rat(next.Limit+next.Burst, 1)
			} else {
				most = new(big.Rat).Mul(rat(int64(next.MaxWait), 1), rat(next.Limit, int64(next.Window)))
				most.Add(most, rat(1, 1))
			}
		}
		if most == nil {
			continue
		}
		got := int64(0)
		for got < 200 && l.Acquire(now, 1).OK {
			got++
		}
		bound, _ := new(big.Rat).Sub(most, debt).Float64()
		require.LessOrEqualf(t, float64(got), max(bound, 0)+1e-9, "case %d: spent %d, reloaded at +%dns through %+v; owed %s requests",
			i, spend, now-T, chain, debt.FloatString(3))
	}
}
