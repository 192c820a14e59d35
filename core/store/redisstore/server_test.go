package redisstore

import (
	"math"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core/store"
	"github.com/sluicekit/sluice/core/store/redisstore/internal/redistest"
)

// shared is the package's Redis (package redistest), stopped by TestMain.
// Tests that kill or freeze a Redis start their own.
var shared redistest.Shared

func sharedServer(tb testing.TB) *redistest.Server {
	tb.Helper()
	return shared.Server(tb)
}

// SharedRedis is the package's Redis, for the tests of package
// redisstore_test.
func SharedRedis(tb testing.TB) *redistest.Server {
	tb.Helper()
	return shared.Server(tb)
}

// MostWithin returns the most of the admission spans ([before, after] of
// each, in nanoseconds) that can lie in one span of length s (mostWithin),
// for the tests of package redisstore_test.
func MostWithin(spans [][2]int64, s time.Duration) int64 { return mostWithin(spans, int64(s)) }

// ClockSpread returns how far apart the Stores' views of Redis's clock
// are, for the tests of package redisstore_test.
func ClockSpread(stores ...*Store) time.Duration {
	lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
	for _, st := range stores {
		lo, hi = min(lo, st.offset.Load()), max(hi, st.offset.Load())
	}
	return time.Duration(hi - lo)
}

// newTestStore returns a Store on a client of srv with a prefix of its own,
// closed when tb ends.
func newTestStore(tb testing.TB, srv *redistest.Server, opts ...Option) (*Store, *redis.Client) {
	c := srv.Client(tb)
	// The suites' timeout unless opts give one: a starved CPU makes a
	// healthy Redis's replies read later than the default 50ms.
	st, err := New(c, append([]Option{WithPrefix(redistest.UniquePrefix()), WithTimeout(suiteTimeout)}, opts...)...)
	require.NoError(tb, err)
	tb.Cleanup(func() { _ = st.Close() })
	return st, c
}

func TestMain(m *testing.M) {
	redistest.Main(m, shared.Stop)
}

// storeAlgorithms returns the algorithms a Store supports.
func storeAlgorithms() []store.Algorithm {
	return []store.Algorithm{store.SlidingCounter, store.TokenBucket, store.LeakyBucket}
}

// The largest Window and Limit store.Limit.Validate accepts.
const (
	maxWindow = 30 * 24 * time.Hour
	maxLimit  = 1 << 52
)
