package flow

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core/stripe"
)

// leasingBucket returns the token bucket of cfg leasing to stripes CPUs,
// each lease valid for the refill of reserve tokens, taken while a request
// leaves at least from tokens: smaller than a real bucket's, so that a
// test goes through leasing and back.
func leasingBucket(t *testing.T, cfg Config, stripes int, reserve, from int64) *gcra {
	t.Helper()
	cfg.Algorithm = TokenBucket
	g := mustNew(t, cfg, nil).(*gcra)
	require.Nil(t, g.leases, "a small bucket does not lease")
	g.leaseWith(stripes, reserve, from)
	return g
}

// TestBucketLeasesOnlyWhenLarge: a token bucket leases when it holds at
// least twice LeaseShare times the reserve, with a whole-nanosecond cost,
// no warm-up; never a leaky bucket.
func TestBucketLeasesOnlyWhenLarge(t *testing.T) {
	from := stripe.LeaseShare * leaseReserve(stripe.Count())
	for _, tc := range []struct {
		cfg   Config
		lease bool
	}{
		{Config{Algorithm: TokenBucket, Limit: 2 * from, Window: time.Duration(2 * from)}, true},
		{Config{Algorithm: TokenBucket, Limit: from, Burst: from, Window: time.Duration(from)}, true},
		{Config{Algorithm: TokenBucket, Limit: 2*from - 1, Window: time.Duration(2*from - 1)}, false},
		{Config{Algorithm: TokenBucket, Limit: 2 * from, Window: time.Duration(6 * from), Warmup: s}, false},
		{Config{Algorithm: TokenBucket, Limit: 3 * from, Window: time.Duration(4 * from)}, false}, // a fractional cost
		{Config{Algorithm: LeakyBucket, Limit: 2 * from, Window: time.Duration(2 * from)}, false},
	} {
		g := mustNew(t, tc.cfg, nil).(*gcra)
		assert.Equal(t, tc.lease, g.leases != nil, "%+v", tc.cfg)
	}
}

// TestBucketLeasesDrainExactly: CPUs taking turns at one time, until every
// one is rejected, admit the capacity less the reserve of the first
// lease's validity (less one: that request's own cost lies within it),
// exactly: no permit is lost or made; leasing stops near the limit. A CPU
// that takes a lease and goes idle holds back at most its lease.
func TestBucketLeasesDrainExactly(t *testing.T) {
	const (
		lim, reserve, from = 40000, 512, 4096
		at                 = int64(s)
	)
	cfg := Config{Limit: lim, Window: time.Duration(4 * lim), Burst: 100}
	drain := func(g *gcra, cpus []uint32) (admitted, leased int64) {
		for open := true; open; {
			open = false
			for _, cpu := range cpus {
				if d := g.AcquireOn(cpu, at, 1); d.OK {
					admitted++
					if d.mark == 0 {
						leased++
					}
					open = true
				}
			}
		}
		return admitted, leased
	}
	g := leasingBucket(t, cfg, 4, reserve, from)
	admitted, leased := drain(g, []uint32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9})
	assert.Equal(t, int64(lim+100-reserve+1), admitted)
	assert.Greater(t, leased, admitted/2, "admitted from leases")
	for i := range g.leases {
		assert.Zero(t, g.leases[i].word.Load()&leaseLeft, "lease %d", i)
	}

	g = leasingBucket(t, cfg, 4, reserve, from)
	require.True(t, g.AcquireOn(0, at, 1).OK) // CPU 0 takes a lease, then idles
	admitted, _ = drain(g, []uint32{1, 2, 3})
	assert.Equal(t, int64(lim+100-reserve+1-1-stripe.MaxLease), admitted, "held back by the idle lease")
}

// TestBucketLeaseValidity: a lease taken at t0 on a full bucket moves the
// TAT past its expiry, t0 plus the refill of the reserve, before its
// permits' cost; it serves readings from t0 until it expires, not earlier
// ones, and what it has left then is not given back.
func TestBucketLeaseValidity(t *testing.T) {
	const (
		cost, reserve = 10, 512
		t0            = int64(s)
	)
	g := leasingBucket(t, Config{Limit: 100000, Window: 100000 * cost}, 2, reserve, 4096)
	require.True(t, g.AcquireOn(0, t0, 1).OK)
	expiry := t0 + reserve*cost
	assert.Equal(t, expiry+stripe.MaxLease*cost, g.st.tat.Load())
	assert.Equal(t, expiry+2*stripe.MaxLease*cost, g.st.floor.Load())
	ls := &g.leases[0]
	w := ls.word.Load()
	for _, now := range []int64{t0, expiry - 1} {
		d := g.AcquireOn(0, now, 1)
		require.True(t, d.OK)
		assert.Zero(t, d.mark, "from the lease at %d", now)
	}
	assert.Equal(t, w-2, ls.word.Load(), "the same lease")
	// A reading from before the lease was taken, then one at its expiry:
	// each takes a new lease, and what the old one had left is lost.
	tat := g.st.tat.Load()
	for _, now := range []int64{t0 - 1, expiry} {
		w := ls.word.Load()
		d := g.AcquireOn(0, now, 1)
		require.True(t, d.OK)
		assert.NotZero(t, d.mark, "not from the lease at %d", now)
		assert.NotEqual(t, w&^leaseLeft, ls.word.Load()&^leaseLeft, "a new lease at %d", now)
	}
	assert.Equal(t, expiry+reserve*cost+stripe.MaxLease*cost, g.st.tat.Load(), "the last lease from its expiry")
	assert.Less(t, tat+(1+stripe.MaxLease)*cost, g.st.tat.Load())
}

// TestBucketLeaseGivesBack: an Undo, and a refill before the lease
// expires, give their permits back to the bucket, but never take the TAT
// below the floor that covers the leases' permits.
func TestBucketLeaseGivesBack(t *testing.T) {
	const (
		cost, reserve = 10, 512
		t0            = int64(s)
	)
	g := leasingBucket(t, Config{Limit: 100000, Window: 100000 * cost}, 2, reserve, 4096)
	d := g.AcquireOn(0, t0, 1) // takes a lease
	require.True(t, d.OK)
	floor := g.st.floor.Load()
	tat := g.st.tat.Load()
	g.Undo(d, 1)
	assert.Equal(t, tat, g.st.tat.Load(), "at the floor: nothing given back")
	require.True(t, g.Acquire(t0, 1000).OK) // on the bucket: far above the floor
	tat += 1000 * cost
	d = g.AcquireOn(0, t0, 1) // from the lease: 63 left
	require.True(t, d.OK)
	require.Zero(t, d.mark)
	g.Undo(d, 1)
	tat -= cost
	assert.Equal(t, tat, g.st.tat.Load(), "Undo of a leased permit")
	d = g.AcquireOn(0, t0, 100) // more than the lease has: a refill
	require.True(t, d.OK)
	assert.Equal(t, tat+(100-63+stripe.MaxLease)*cost, g.st.tat.Load(), "the lease's 63 given back, 100 and a new lease taken")
	assert.Equal(t, floor, g.st.floor.Load())
	// Given back in full, everything lands on the floor, not below.
	g.Undo(d, 100)
	g.Undo(Decision{OK: true, Limit: d.Limit}, 5000)
	assert.Equal(t, floor, g.st.tat.Load())
}

// TestConcurrentBucketLeases: 64 goroutines on more CPUs than there are
// leases, on a fake clock, in turns of busy spells (first one reading in
// 16 asks, below the rate, taking leases on a full bucket; then every
// reading asks, at 6 times the rate, draining the bucket through leasing
// to the limit, while some CPUs idle with their leases) and quiet ones
// (the bucket fills up; leases expire), asking for 1 or 2 permits and
// giving every 5th admission back: any span of readings holds at most
// what the bucket lets through, and over a fifth of the admissions came
// from leases (23-31% in 38 runs under -race beside busy loops: most of a
// busy spell is at the limit, where nothing leases, and how many
// goroutines race on one CPU's lease varies). Which reading asks, and on
// which CPU, depends on its time only, not on which goroutine the
// scheduler runs.
func TestConcurrentBucketLeases(t *testing.T) {
	const (
		cost, lim = 4, 4000 // a window of 16µs
		spell     = 40_000  // ns of busy, then of quiet, fake time
		spells    = 8
		stripes   = 4
	)
	g := leasingBucket(t, Config{Limit: lim, Window: cost * lim}, stripes, 512, 1024)
	nOf := func(at int64) int64 { return 1 + at/3%2 }
	var fromLeases, undone, rejected atomic.Int64
	adm := hammerWith(raceGoroutines, 1, 2*spell*spells, func(_ int, at int64) Decision {
		k := at / spell
		if k%2 == 1 || (at%spell < spell/4 && at%16 != 0) {
			return Decision{} // quiet, or below the rate
		}
		// A CPU idling with its lease in this spell leaves its request to
		// the next one (at most two of the four idle).
		cpu := uint32(at % stripes)
		for (int64(cpu%stripes)+k/2)%3 == 0 {
			cpu++
		}
		n := nOf(at)
		d := g.AcquireOn(cpu, at, n)
		if d.OK && d.mark == 0 {
			fromLeases.Add(1)
		} else if !d.OK {
			rejected.Add(1)
		}
		if d.OK && at%5 == 0 {
			g.Undo(d, n)
			undone.Add(1)
			return Decision{}
		}
		return d
	})
	times, n := make([]int64, len(adm)), make([]int64, len(adm))
	var total int64
	for i, a := range adm {
		times[i], n[i] = a.at, nOf(a.at)
		total += n[i]
	}
	checkRefill(t, times, n, cost, lim*cost)
	// The bucket was drained: its capacity at least half over, and
	// requests rejected at its limit.
	assert.Greater(t, total, int64(spells/2*lim/2), "admitted in all")
	assert.Positive(t, rejected.Load())
	assert.Greater(t, fromLeases.Load(), int64(len(adm)/5), "admitted from leases")
	assert.Positive(t, undone.Load())
}

// TestBucketLeasesNeverExceed: at one instant, a bucket admits at most its
// capacity, whatever leases were taken before: a lease taken on a full
// bucket whose tokens the refill would have replaced, a lease used after
// it expired, a lease whose cover another one's give-back removed.
func TestBucketLeasesNeverExceed(t *testing.T) {
	const (
		cost, lim, reserve = 10, 100000, 512
		t0                 = int64(s)
		valid              = reserve * cost
	)
	for _, tc := range []struct {
		name string
		at   int64         // the instant
		cpus []uint32      // CPUs asking at the instant, after the bucket is drained
		prep func(g *gcra) // before the instant
	}{
		{"a full bucket refills while a lease is out", t0 + valid - 1, []uint32{0}, func(g *gcra) {
			g.AcquireOn(0, t0, 1)
		}},
		{"an expired lease", t0 + 1000*cost + valid, []uint32{0}, func(g *gcra) {
			g.AcquireOn(0, t0, 1)
		}},
		{"another lease gives back", t0 + 10*cost + valid - 1, []uint32{1}, func(g *gcra) {
			d := g.Acquire(t0, 200)
			g.AcquireOn(0, t0, 1)
			g.AcquireOn(1, t0+10*cost, 1)
			g.Undo(d, 200)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := leasingBucket(t, Config{Limit: lim, Window: lim * cost}, 2, reserve, 4096)
			tc.prep(g)
			var admitted int64
			for g.Acquire(tc.at, 1).OK {
				admitted++
			}
			for _, cpu := range tc.cpus {
				for g.AcquireOn(cpu, tc.at, 1).OK {
					admitted++
				}
			}
			assert.LessOrEqual(t, admitted, int64(lim))
			assert.Greater(t, admitted, int64(lim-2*reserve))
		})
	}
}
