// Package redistest gives tests a Redis: a redis-server the test starts on
// a free loopback port, the Redis at SLUICE_REDIS_ADDR, or, when neither is
// there, an in-process miniredis (github.com/alicebob/miniredis/v2), which
// the test log says.
//
//	func TestSomething(t *testing.T) {
//		srv := redistest.Start(t) // stopped when the test ends
//		client := srv.Client(t)   // closed when the test ends
//		...
//	}
//
// Start picks, in order: the Redis at SLUICE_REDIS_ADDR, which the test
// only uses; a redis-server found on PATH, started with no persistence
// on 127.0.0.1 and a free port, which the test owns; miniredis. With
// SLUICE_REQUIRE_REDIS=1 a missing real Redis fails the test
// instead of falling back to miniredis: CI sets it, so that a machine
// without redis-server cannot pass the tests on miniredis unnoticed.
//
// Fault tests use StartOwned, which never takes SLUICE_REDIS_ADDR's Redis
// (a test must not kill what it did not start): with a Server the test
// owns, Kill ends the process (SIGKILL), Restart starts it again on the same
// port, and Freeze and Thaw stop and resume it (SIGSTOP, SIGCONT), so that
// connections stay open and nothing answers.
//
// Shared.Cluster gives a one-node Redis Cluster that owns every slot, and
// StartSentinel a Redis Sentinel watching a master, both from redis-server.
//
// Shared is one Redis for all the tests of a package, started on first use
// and stopped by the package's TestMain:
//
//	var shared redistest.Shared
//
//	func TestMain(m *testing.M) {
//		redistest.Main(m, shared.Stop) // quiet logs; goroutines left fail
//	}
//
// Saturate keeps every CPU busy until a test ends, for tests of a promise
// on a busy host.
//
// Tests that share a Redis keep apart with keys of their own:
// UniquePrefix returns a prefix no other test (in this process or another
// using the same Redis) has.
//
// It is internal to the redisstore module: the tests of redisstore and of the
// nested modules under it (peerbench, integration) use it.
package redistest
