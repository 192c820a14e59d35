package flow

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core/internal/window"
	"github.com/sluicekit/sluice/core/stripe"
)

// leapOf returns the leap-array limiter of cfg, with leases.
func leapOf(t *testing.T, cfg Config, prev Limiter) *leapArray {
	t.Helper()
	l := mustNew(t, cfg, prev).(*leapArray)
	require.NotEmpty(t, l.leases)
	return l
}

// chunkFor returns the lease a CPU takes with remaining permits left.
func chunkFor(l *leapArray, remaining int64) int64 {
	return stripe.LeaseSize(remaining, len(l.leases))
}

// TestLeaseOnOneCPU: with much quota left, a CPU takes a lease with its
// first request and admits the next ones from it without counting them in
// the window again; the quota it reports is exact, and an Undo gives a
// permit back to the window.
func TestLeaseOnOneCPU(t *testing.T) {
	const lim = 1 << 20
	l := leapOf(t, Config{Limit: lim, Window: s, Buckets: 10}, nil)
	chunk := chunkFor(l, lim-1)
	require.Equal(t, int64(stripe.MaxLease), chunk)
	at := int64(500 * ms)
	for i := int64(1); i <= 2*chunk+1; i++ {
		d := l.AcquireOn(0, at, 1)
		require.True(t, d.OK, "request %d", i)
		assert.Equal(t, lim-i, d.Remaining, "request %d", i)
		// Counted in the window: the requests taking a lease (the
		// first, and every chunk+1-th) with their lease.
		leases := (i + chunk) / (chunk + 1)
		assert.Equal(t, leases*(chunk+1), l.arr.Sum(at, window.Pass), "request %d", i)
	}
	before := l.arr.Sum(at, window.Pass)
	d := l.AcquireOn(0, at, 1) // the lease's last permit
	require.True(t, d.OK)
	require.Equal(t, before, l.arr.Sum(at, window.Pass))
	l.Undo(d, 1)
	assert.Equal(t, before-1, l.arr.Sum(at, window.Pass), "Undo of a leased permit")
}

// TestLeaseWithoutQuota: a decision asked without its quota (a request
// whose RateLimit fields nobody reads) admits and counts as one asked with
// it, and an Undo gives its permit back; only the quota is left unread.
func TestLeaseWithoutQuota(t *testing.T) {
	const lim = 1 << 20
	l := leapOf(t, Config{Limit: lim, Window: s, Buckets: 10}, nil)
	at := int64(500 * ms)
	for i := int64(1); i <= 2*stripe.MaxLease; i++ {
		var d Decision
		AcquireTo(l, &d, 0, at, 1, false)
		require.True(t, d.OK, "request %d", i)
		assert.Equal(t, int64(lim), d.Limit, "request %d", i)
		if i == 2*stripe.MaxLease {
			l.Undo(d, 1)
		}
	}
	d := l.AcquireOn(0, at, 1)
	require.True(t, d.OK)
	assert.Equal(t, int64(lim-2*stripe.MaxLease), d.Remaining, "quota after the requests without it, one undone")
}

// TestLeaseEndsWithItsBucket: a lease is used only while the bucket it was
// counted in is current; the next request takes a new one in the new
// bucket and gives back what the old one had left, so the old bucket
// counts exactly the requests admitted in it.
func TestLeaseEndsWithItsBucket(t *testing.T) {
	const lim = 1 << 20
	l := leapOf(t, Config{Limit: lim, Window: s, Buckets: 10}, nil)
	chunk := chunkFor(l, lim-1)
	for range 10 {
		require.True(t, l.AcquireOn(0, int64(50*ms), 1).OK)
	}
	assert.Equal(t, 1+chunk, l.arr.Sum(int64(50*ms), window.Pass))
	d := l.AcquireOn(0, int64(150*ms), 1)
	require.True(t, d.OK)
	assert.Equal(t, int64(150*ms)-int64(150*ms)%int64(100*ms), d.mark, "counted in the new bucket")
	var counts []int64
	l.arr.Each(int64(150*ms), func(b *window.Bucket) { counts = append(counts, b.Get(window.Pass)) })
	assert.Equal(t, []int64{10, 1 + chunkFor(l, lim-11)}, counts, "the old bucket got back what its lease had left")
}

// TestLeasesDrainToTheLimit: CPUs with leases and CPUs without, taking
// turns until every one is rejected, admit exactly the limit: no lease is
// lost, and leasing stops when the quota left gets small.
func TestLeasesDrainToTheLimit(t *testing.T) {
	const lim = 20000
	l := leapOf(t, Config{Limit: lim, Window: s, Buckets: 10}, nil)
	cpus := uint32(3 * len(l.leases)) // several CPUs per lease too
	at := int64(500 * ms)
	var admitted int64
	for open := true; open; {
		open = false
		for cpu := range cpus {
			if l.AcquireOn(cpu, at, 1).OK {
				admitted++
				open = true
			}
		}
	}
	assert.Equal(t, int64(lim), admitted)
	assert.Equal(t, int64(lim), l.arr.Sum(at, window.Pass))
}

// TestReloadGivesLeasesBack: a reload that keeps the window gives back
// what the old limiter's leases had left.
func TestReloadGivesLeasesBack(t *testing.T) {
	cfg := Config{Limit: 1 << 20, Window: s, Buckets: 10}
	prev := leapOf(t, cfg, nil)
	at := int64(500 * ms)
	for cpu := range uint32(len(prev.leases)) {
		require.True(t, prev.AcquireOn(cpu, at, 1).OK)
	}
	next := leapOf(t, cfg, prev)
	assert.Equal(t, int64(len(prev.leases)), next.arr.Sum(at, window.Pass))
}

// TestConcurrentLeases: 64 goroutines on more CPU indexes than there are
// leases, with a limit large enough for leasing: every bucket-aligned
// window holds at most the limit, counting each admission in the bucket
// its permit was counted in, and no request is counted in a bucket that
// ended before it.
func TestConcurrentLeases(t *testing.T) {
	const (
		buckets = 10
		win     = 1_000_000 // 1ms of fake time
		lim     = 20000
		step    = 10 // 100k readings a window
		windows = 4
	)
	l := leapOf(t, Config{Limit: lim, Window: win, Buckets: buckets}, nil)
	adm := hammerWith(raceGoroutines, step, windows*win, func(g int, at int64) Decision { return l.AcquireOn(uint32(g), at, 1) })
	checkBucketWindows(t, adm, win, buckets, lim)
	assert.GreaterOrEqual(t, len(adm), lim*windows/2, "admitted in all")
}

// TestRejectionLeavesTheLease: a rejection by a full window, on a CPU
// whose lease is empty, writes nothing: the lease keeps its generation (no
// refill claimed it), and the decision is the window's.
func TestRejectionLeavesTheLease(t *testing.T) {
	l := leapOf(t, Config{Limit: 3, Window: s, Buckets: 10}, nil)
	at := int64(500 * ms)
	for range 3 {
		require.True(t, l.AcquireOn(0, at, 1).OK)
	}
	ls := &l.leases[stripe.Of(0, len(l.leases))]
	w := ls.word.Load()
	for range 3 {
		d := l.AcquireOn(0, at, 1)
		require.False(t, d.OK)
		assert.Equal(t, Decision{Limit: 3, RetryAfter: s}, d)
		assert.Equal(t, w, ls.word.Load(), "the lease was claimed")
	}
}
