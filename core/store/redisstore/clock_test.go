package redisstore

import (
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestViewOfRedisClockNeverGoesBack: a measure of Redis's clock that comes
// out lower than the last (each is off by up to half a round trip) makes
// the store's view stand still, not step back, so that a pacing decision
// never makes a request wait longer than its slot.
func TestViewOfRedisClockNeverGoesBack(t *testing.T) {
	client := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"}) // never called
	defer client.Close()
	st, err := New(client)
	require.NoError(t, err)
	defer st.Close()
	reply := func(at time.Time) []any {
		return []any{strconv.FormatInt(at.Unix(), 10), strconv.FormatInt(int64(at.Nanosecond()/1000), 10)}
	}
	measure := func(redisNow time.Time) {
		local := int64(time.Since(st.start))
		require.NoError(t, st.setOffset(reply(redisNow), local, local))
	}
	measure(time.Now())
	t1 := st.now()
	measure(time.Now().Add(-50 * time.Millisecond)) // 50ms lower
	t2 := st.now()
	assert.GreaterOrEqual(t, t2, t1, "the view of Redis's clock went back")
	assert.Less(t, t2-t1, int64(10*time.Millisecond), "it stands still rather than jumping")
	// It moves again once the lower measure catches up.
	require.Eventually(t, func() bool { return st.now() > t2 }, 5*time.Second, 5*time.Millisecond)
	// A higher measure applies at once.
	before := st.now()
	measure(time.Now().Add(time.Second))
	assert.Greater(t, st.now()-before, int64(900*time.Millisecond))
}

// TestLooseMeasuresOfRedisClockAreIgnored: a measure whose round trip took
// far longer than the best one (off by up to half of it) does not replace
// a recent tight one.
func TestLooseMeasuresOfRedisClockAreIgnored(t *testing.T) {
	client := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"}) // never called
	defer client.Close()
	st, err := New(client)
	require.NoError(t, err)
	defer st.Close()
	local := int64(time.Since(st.start))
	redisNow := time.Now()
	reply := []any{strconv.FormatInt(redisNow.Unix(), 10), strconv.FormatInt(int64(redisNow.Nanosecond()/1000), 10)}
	require.NoError(t, st.setOffset(reply, local, local+int64(time.Millisecond))) // tight
	tight := st.offset.Load()
	// The same reply, read over a 300ms round trip: its midpoint is 150ms
	// later, its offset 150ms lower. Ignored.
	require.NoError(t, st.setOffset(reply, local, local+int64(300*time.Millisecond)))
	assert.Equal(t, tight, st.offset.Load())
	// A tight one applies.
	require.NoError(t, st.setOffset(reply, local+int64(10*time.Millisecond), local+int64(11*time.Millisecond)))
	assert.Equal(t, tight-int64(10*time.Millisecond), st.offset.Load())
	// Once the tight one is a minute old, a loose one applies again.
	require.NoError(t, st.setOffset(reply, local+int64(2*time.Minute), local+int64(2*time.Minute+300*time.Millisecond)))
	assert.Equal(t, tight-int64(2*time.Minute+150*time.Millisecond)+int64(500*time.Microsecond), st.offset.Load())
}
