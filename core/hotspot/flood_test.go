package hotspot

import (
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFlood: ten hot values keep their exact limits while a million values
// that are each seen once stream past a table of 10 000.
//
// Every 10ms of simulated time, for 20 simulated seconds, each hot value
// sends one request (ten times its limit of 10 per second, burst 0) and 100
// one-time values arrive; every 50th round, a burst of 20 100 one-time
// values, twice the table, arrives instead. A plain LRU table would lose
// every hot value in each burst; the protected segment keeps them.
//
// A token bucket admits a hot value's requests at one per 100ms once its
// first full bucket is spent: exactly 10 in every second after the first.
// Eviction would reset a bucket to full and let 10 more through in that
// second. The same hot schedule is run against a Limiter that sees no
// flood, and the admitted counts must be equal second by second; the
// table's size is checked every round.
func TestFlood(t *testing.T) {
	const (
		maxKeys    = 10_000
		hot        = 10
		limit      = 10
		seconds    = 20
		period     = 10 * time.Millisecond
		rounds     = seconds * int(time.Second/period)
		burstEvery = 50
		burst      = 20_100 // twice the table, and a round's worth
		steady     = 100
		oneTime    = rounds/burstEvery*burst + (rounds-rounds/burstEvery)*steady
	)
	require.Equal(t, 1_000_000, oneTime)
	cfg := Config{Limit: limit, Window: time.Second, MaxKeys: maxKeys}
	flooded, quiet := mustNew(t, cfg, nil), mustNew(t, cfg, nil)
	hotValue := func(h int) string { return "hot-" + strconv.Itoa(h) }

	var admitted, reference [hot][seconds]int
	next := 0 // next one-time value
	for r := range rounds {
		start := time.Duration(r) * period
		sec := int(start / time.Second)
		for h := range hot {
			at := int64(start) + int64(h) // hot values a nanosecond apart
			if flooded.Acquire(at, hotValue(h), 1).OK {
				admitted[h][sec]++
			}
			if quiet.Acquire(at, hotValue(h), 1).OK {
				reference[h][sec]++
			}
		}
		n := steady
		if r%burstEvery == burstEvery-1 {
			n = burst
		}
		for i := range n {
			at := int64(start) + hot + int64(i)*int64(period-hot)/int64(n) // spread over the round
			d := flooded.Acquire(at, "once-"+strconv.Itoa(next), 1)
			require.True(t, d.OK, "a new value has a full bucket")
			next++
		}
		require.LessOrEqual(t, flooded.Len(), maxKeys, "round %d", r)
	}
	require.Equal(t, oneTime, next)
	assert.Equal(t, maxKeys, flooded.Len(), "full after the flood")
	assert.Equal(t, reference, admitted, "per second, per hot value: the flood changed a hot value's decisions")
	for h := range hot {
		for sec := 1; sec < seconds; sec++ {
			assert.Equal(t, limit, admitted[h][sec], "hot value %d, second %d", h, sec)
		}
		// Hot values came first, into new records: a record in its first
		// life was never evicted.
		ok, _, gen := lookup(flooded, hotValue(h))
		assert.True(t, ok)
		assert.EqualValues(t, 1, gen, "hot value %d: its record was reused", h)
	}
	checkTable(t, flooded)
}
