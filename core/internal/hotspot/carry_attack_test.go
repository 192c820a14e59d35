package hotspot

import (
	"math/big"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core/internal/flow"
)

// TestReloadChainsKeepEveryValuesDebt spends the buckets of 40 values (one
// with an override) at T, reloads the Limiter at T+d through a chain of 1
// to 4 random shapes (token or leaky, limits of 1 to 1e9, windows of 1ns
// to a month, overrides added and dropped, MaxKeys from 1 up, so that
// shrinking tables evict), and counts what passes for each value then:
// never more than its last bucket's capacity less what it owed at the
// first reload (a debt capped only at flow.MaxSpan). A debt of half a bucket or more is never reset, evicted
// or not; a lighter one evicted may come back (Config.MaxKeys).
func TestReloadChainsKeepEveryValuesDebt(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 28))
	windows := []time.Duration{1, 7, 1000, 97 * time.Millisecond, 1300 * time.Millisecond, time.Second, time.Minute, 30 * 24 * time.Hour}
	random := func() Config {
		c := Config{Limit: 1 + r.Int64N(20), Window: windows[r.IntN(len(windows))], MaxKeys: 1 + r.IntN(60)}
		if r.IntN(4) == 0 {
			c.Limit = 1 + r.Int64N(1e9)
		}
		if r.IntN(2) == 0 {
			c.Algorithm, c.Burst = TokenBucket, r.Int64N(10)
		} else {
			c.Algorithm, c.MaxWait = LeakyBucket, time.Duration(r.Int64N(int64(c.Window)*3))
		}
		if r.IntN(2) == 0 {
			c.Overrides = map[string]int64{"v0": 1 + r.Int64N(30)}
		}
		return c
	}
	rat := func(n, d int64) *big.Rat { return new(big.Rat).SetFrac(big.NewInt(n), big.NewInt(d)) }
	bucket := func(c Config, v string) flow.GCRA {
		g := flow.GCRA{Limit: c.Limit, Window: c.Window, Burst: c.Burst, MaxWait: c.MaxWait, Queue: c.Algorithm == LeakyBucket}
		if o, ok := c.Overrides[v]; ok {
			g.Limit = o
		}
		return g
	}
	capacity := func(g flow.GCRA) *big.Rat { // in time
		if g.Queue {
			return new(big.Rat).Add(rat(int64(g.MaxWait), 1), rat(int64(g.Window), g.Limit))
		}
		return new(big.Rat).Add(rat(int64(g.Window), 1), rat(g.Burst*int64(g.Window), g.Limit))
	}
	const values = 40
	for i := range 300 {
		first := random()
		first.MaxKeys = values
		l, err := New(first, nil)
		if err != nil {
			continue
		}
		const T = int64(1 << 40)
		for v := range values {
			for k := 0; k < 200 && l.Acquire(T, "v"+strconv.Itoa(v), 1).OK; k++ {
			}
		}
		now := T + r.Int64N(int64(first.Window)/4+1)
		owed := make([]*big.Rat, values) // in requests
		for v := range values {
			g := bucket(first, "v"+strconv.Itoa(v))
			d := l.Acquire(now, "v"+strconv.Itoa(v), 1)
			left := int64(0) // what fits, rounded down
			if d.OK {
				left = d.Remaining + 1
			}
			owed[v] = rat(max(g.Limit+g.Burst-left-1, 0), 1) // at least
			if g.Queue {
				owed[v].SetInt64(0) // a leaky bucket's debt: not read from its decision
			}
			if d.OK {
				l.Undo(d, 1)
			}
		}
		chain, light := []Config{first}, make([]bool, values)
		var last Config
		for range 1 + r.IntN(4) {
			next := random()
			n, err := Reload(next, l, now)
			if err != nil {
				continue
			}
			l, last, chain = n, next, append(chain, next)
			keep := new(big.Rat).Quo(capacity(bucket(next, "")), rat(2, 1)) // half the smallest bucket (see debts)
			for o := range next.Overrides {
				if c := new(big.Rat).Quo(capacity(bucket(next, o)), rat(2, 1)); c.Cmp(keep) < 0 {
					keep = c
				}
			}
			for v := range values {
				g := bucket(next, "v"+strconv.Itoa(v))
				if g.Limit == 0 {
					continue
				}
				if span := new(big.Rat).Mul(rat(int64(flow.MaxSpan), 1), rat(g.Limit, int64(g.Window))); owed[v].Cmp(span) > 0 {
					owed[v] = span
				}
				// A light debt evicted by a smaller table may come back
				// (Config.MaxKeys): such a value is not checked.
				debt := new(big.Rat).Mul(owed[v], rat(int64(g.Window), g.Limit))
				light[v] = light[v] || next.MaxKeys < values && debt.Cmp(new(big.Rat).Mul(keep, rat(101, 100))) < 0
			}
		}
		if len(chain) == 1 {
			continue
		}
		for v := range values {
			g := bucket(last, "v"+strconv.Itoa(v))
			if light[v] || g.Limit == 0 {
				continue
			}
			most := rat(g.Limit+g.Burst, 1)
			if g.Queue {
				most = new(big.Rat).Mul(rat(int64(g.MaxWait), 1), rat(g.Limit, int64(g.Window)))
				most.Add(most, rat(1, 1))
			}
			got := int64(0)
			for got < 300 && l.Acquire(now, "v"+strconv.Itoa(v), 1).OK {
				got++
			}
			bound, _ := new(big.Rat).Sub(most, owed[v]).Float64()
			require.LessOrEqualf(t, float64(got), max(bound, 0)+1e-9, "case %d value v%d: owed %s requests, reloaded at +%dns through %+v",
				i, v, owed[v].FloatString(3), now-T, chain)
		}
	}
}

// TestReloadKeepsEvictedDebtsOfOtherBuckets: 40 users spend their 20
// (10 per second, burst 10), a reload to 4 keys evicts them, their debts
// kept in the table's cells, and a second reload lengthens the window to
// 1.1s and lowers the override of "vip" from 30 to 25, whose cost grows
// most: the cells are converted by vip's bucket, and a user's debt must
// not be cut to vip's smaller capacity. Before the fix, 168 of the 800
// requests spent came back at once (a user's 20 read as 1.54s of 2.2s).
func TestReloadKeepsEvictedDebtsOfOtherBuckets(t *testing.T) {
	a := Config{Algorithm: TokenBucket, Limit: 10, Window: time.Second, Burst: 10, MaxKeys: 40, Overrides: map[string]int64{"vip": 30}}
	l, err := New(a, nil)
	require.NoError(t, err)
	const T = int64(1 << 40)
	for v := range 40 {
		for l.Acquire(T, "u"+strconv.Itoa(v), 1).OK {
		}
	}
	b := a
	b.MaxKeys = 4
	l, err = Reload(b, l, T)
	require.NoError(t, err)
	c := b
	c.Window, c.Overrides = 1100*time.Millisecond, map[string]int64{"vip": 25}
	l, err = Reload(c, l, T)
	require.NoError(t, err)
	passed := 0
	for v := range 40 {
		for l.Acquire(T, "u"+strconv.Itoa(v), 1).OK {
			passed++
		}
	}
	require.Zero(t, passed, "spent users got requests back")
}
