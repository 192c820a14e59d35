package redistest_test

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core/store/redisstore/internal/redistest"
)

func TestMain(m *testing.M) {
	redistest.QuietRedisLogs()
	os.Exit(m.Run())
}

func ping(c *redis.Client, d time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	return c.Ping(ctx).Err()
}

// noEnv clears the package's variables for the test.
func noEnv(t *testing.T) {
	t.Setenv(redistest.EnvAddr, "")
	t.Setenv(redistest.EnvRequire, "")
}

// TestKillRestart kills a Redis the test owns, and starts it again on the
// same address.
func TestKillRestart(t *testing.T) {
	srv := redistest.StartOwned(t)
	require.True(t, srv.Owned())
	c := srv.Client(t, func(o *redis.Options) { o.MaxRetries = -1 })
	ctx := context.Background()
	require.NoError(t, c.Set(ctx, "k", "v", 0).Err())

	srv.Kill()
	assert.Error(t, ping(c, time.Second), "killed")
	srv.Kill() // again: nothing to do

	addr := srv.Addr
	srv.Restart(t)
	assert.Equal(t, addr, srv.Addr, "the same address")
	require.Eventually(t, func() bool { return ping(c, time.Second) == nil }, 10*time.Second, 10*time.Millisecond)
	err := c.Get(ctx, "k").Err()
	if srv.Kind == redistest.Process {
		assert.ErrorIs(t, err, redis.Nil, "a killed redis-server comes back empty")
	} else {
		assert.NoError(t, err, "miniredis keeps its data")
	}
}

// TestFreezeThaw stops a redis-server: connections stay open, nothing
// answers; it resumes on Thaw.
func TestFreezeThaw(t *testing.T) {
	srv := redistest.StartOwned(t)
	c := srv.Client(t, func(o *redis.Options) { o.ContextTimeoutEnabled = true })
	require.NoError(t, ping(c, time.Second))
	srv.Freeze(t) // skips on miniredis
	err := ping(c, 100*time.Millisecond)
	srv.Thaw(t)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.NoError(t, ping(c, 5*time.Second))
}

// TestExternal takes the Redis at SLUICE_REDIS_ADDR; StartOwned does not.
func TestExternal(t *testing.T) {
	noEnv(t)
	own := redistest.StartOwned(t)
	t.Setenv(redistest.EnvAddr, own.Addr)
	ext := redistest.Start(t)
	assert.Equal(t, redistest.External, ext.Kind)
	assert.Equal(t, own.Addr, ext.Addr)
	assert.False(t, ext.Owned())
	assert.True(t, ext.Real())
	require.NoError(t, ping(ext.Client(t), time.Second))
	if redistest.HasRedisServer() {
		other := redistest.StartOwned(t)
		assert.Equal(t, redistest.Process, other.Kind)
		assert.NotEqual(t, own.Addr, other.Addr, "a server of its own")
	}
}

// TestExternalMustAnswer fails a test whose SLUICE_REDIS_ADDR does not
// answer.
func TestExternalMustAnswer(t *testing.T) {
	noEnv(t)
	t.Setenv(redistest.EnvAddr, "127.0.0.1:1")
	msg := fatalOf(t, func(tb testing.TB) { redistest.Start(tb) })
	assert.Contains(t, msg, redistest.EnvAddr+"=127.0.0.1:1")
}

// TestMiniredisFallback: without redis-server and SLUICE_REDIS_ADDR the
// tests run on miniredis, unless SLUICE_REQUIRE_REDIS=1 makes that a
// failure.
func TestMiniredisFallback(t *testing.T) {
	noEnv(t)
	t.Setenv("PATH", t.TempDir()) // no redis-server
	require.False(t, redistest.HasRedisServer())
	srv := redistest.Start(t)
	assert.Equal(t, redistest.Miniredis, srv.Kind)
	assert.False(t, srv.Real())
	assert.True(t, srv.Owned())
	require.NoError(t, ping(srv.Client(t), time.Second))
	cl, ok := redistest.StartCluster(t)
	require.True(t, ok)
	assert.Equal(t, redistest.Miniredis, cl.Kind)

	var sh redistest.Shared
	defer sh.Stop()
	assert.Equal(t, redistest.Miniredis, sh.Server(t).Kind)

	t.Setenv(redistest.EnvRequire, "1")
	for name, start := range map[string]func(testing.TB){
		"Start":      func(tb testing.TB) { redistest.Start(tb) },
		"StartOwned": func(tb testing.TB) { redistest.StartOwned(tb) },
		"Shared":     func(tb testing.TB) { (&redistest.Shared{}).Server(tb) },
	} {
		msg := fatalOf(t, start)
		assert.Contains(t, msg, "SLUICE_REQUIRE_REDIS=1 but redis-server is not on PATH", name)
	}

	// With SLUICE_REDIS_ADDR and no redis-server there is nothing to kill
	// and no cluster.
	t.Setenv(redistest.EnvAddr, srv.Addr)
	_, ok = redistest.StartCluster(t)
	assert.False(t, ok)
	t.Run("owned", func(t *testing.T) {
		redistest.StartOwned(t)
		t.Error("not skipped")
	})
}

func TestCluster(t *testing.T) {
	noEnv(t)
	if !redistest.HasRedisServer() {
		t.Skip("no redis-server on PATH")
	}
	srv, ok := redistest.StartCluster(t)
	require.True(t, ok)
	c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{srv.Addr}})
	defer c.Close()
	ctx := context.Background()
	for i := range 10 { // keys in many slots, one node
		require.NoError(t, c.Set(ctx, fmt.Sprint("k", i), i, time.Minute).Err())
	}
	info, err := c.ClusterInfo(ctx).Result()
	require.NoError(t, err)
	assert.Contains(t, info, "cluster_state:ok")
}

func TestSentinel(t *testing.T) {
	noEnv(t)
	master := redistest.StartOwned(t)
	sentinel := redistest.StartSentinel(t, master) // skips without redis-server
	c := redis.NewFailoverClient(&redis.FailoverOptions{MasterName: "main", SentinelAddrs: []string{sentinel.Addr}})
	defer c.Close()
	ctx := context.Background()
	require.NoError(t, c.Set(ctx, "k", "v", time.Minute).Err())
	v, err := master.Client(t).Get(ctx, "k").Result()
	require.NoError(t, err)
	assert.Equal(t, "v", v, "written to the master")
}

// TestShared starts one server for every caller and stops it on Stop.
func TestShared(t *testing.T) {
	noEnv(t)
	var sh redistest.Shared
	a := sh.Server(t)
	b := sh.Server(t)
	assert.Same(t, a, b)
	c := a.Client(t, func(o *redis.Options) { o.MaxRetries = -1 })
	require.NoError(t, ping(c, time.Second))
	cl, ok := sh.Cluster(t)
	require.True(t, ok)
	if redistest.HasRedisServer() {
		assert.NotEqual(t, a.Addr, cl.Addr, "the cluster is a node of its own")
	}
	cl2, _ := sh.Cluster(t)
	assert.Same(t, cl, cl2)
	sh.Stop()
	assert.Error(t, ping(c, time.Second), "stopped")
	d := sh.Server(t)
	defer sh.Stop()
	assert.NoError(t, ping(d.Client(t), time.Second), "a new one after Stop")
}

func TestUniquePrefix(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		p := redistest.UniquePrefix()
		assert.Len(t, p, 17)
		assert.False(t, seen[p], p)
		seen[p] = true
	}
}

// fatalOf runs f with a testing.TB whose Fatal ends f, and returns what f
// failed with ("" when it did not fail).
func fatalOf(t *testing.T, f func(tb testing.TB)) string {
	tb := &fatalTB{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(tb)
	}()
	<-done
	require.NotEmpty(t, tb.msg, "f did not fail")
	return tb.msg
}

// fatalTB is a testing.TB whose Fatal records the message and ends the
// goroutine, as testing's does, without failing the test.
type fatalTB struct {
	testing.TB
	msg string
}

func (f *fatalTB) Helper()           {}
func (f *fatalTB) Log(args ...any)   {}
func (f *fatalTB) Fatal(args ...any) { f.msg = fmt.Sprint(args...); runtime.Goexit() }
func (f *fatalTB) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}
