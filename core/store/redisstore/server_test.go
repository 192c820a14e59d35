package redisstore

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// server is a Redis for a test: a redis-server the test started (which it
// may kill, stop and restart), the one at SLUICE_REDIS_ADDR, or miniredis
// when neither is there. SLUICE_REQUIRE_REDIS=1 makes the fallback a
// failure.
type server struct {
	Addr string
	Kind string // "redis-server", "external" or "miniredis"

	port     int
	dir      string
	cluster  bool
	sentinel string // a sentinel of the master at this address
	mu       sync.Mutex
	cmd      *exec.Cmd
	waited   chan struct{}
	mini     *miniredis.Miniredis
}

// real reports whether the server is a real Redis.
func (s *server) real() bool { return s.Kind != "miniredis" }

// own reports whether the test controls the server's process.
func (s *server) own() bool { return s.Kind != "external" }

// startServer starts a Redis for tb and stops it when tb ends. cluster asks
// for a one-node Redis Cluster owning every slot (real servers only).
func startServer(tb tester, cluster bool) *server {
	tb.Helper()
	if addr := os.Getenv("SLUICE_REDIS_ADDR"); addr != "" && !cluster {
		c := redis.NewClient(&redis.Options{Addr: addr})
		defer c.Close()
		require.NoError(tb, c.Ping(context.Background()).Err(), "SLUICE_REDIS_ADDR=%s", addr)
		return &server{Addr: addr, Kind: "external"}
	}
	if _, err := exec.LookPath("redis-server"); err == nil {
		s := &server{Kind: "redis-server", dir: tb.TempDir(), cluster: cluster}
		for try := 0; ; try++ {
			s.port = freePort(tb)
			err := s.start()
			if err == nil {
				break
			}
			require.Less(tb, try, 5, "starting redis-server: %v", err)
		}
		tb.Cleanup(s.kill)
		if cluster {
			s.makeCluster(tb)
		}
		return s
	}
	if os.Getenv("SLUICE_REQUIRE_REDIS") == "1" {
		tb.Fatal("SLUICE_REQUIRE_REDIS=1 but redis-server is not on PATH and SLUICE_REDIS_ADDR is not set")
	}
	tb.Log("redis-server is not on PATH and SLUICE_REDIS_ADDR is not set: testing against miniredis (in-process)")
	m := miniredis.NewMiniRedis()
	require.NoError(tb, m.Start())
	tb.Cleanup(m.Close)
	return &server{Addr: m.Addr(), Kind: "miniredis", mini: m}
}

func freePort(tb tester) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(tb, err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// start runs redis-server on s.port and waits until it answers PING.
func (s *server) start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.Addr = "127.0.0.1:" + strconv.Itoa(s.port)
	args := []string{"--port", strconv.Itoa(s.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--dir", s.dir, "--protected-mode", "no", "--loglevel", "warning"}
	if s.cluster {
		args = append(args, "--cluster-enabled", "yes", "--cluster-config-file", filepath.Join(s.dir, "nodes.conf"))
	}
	if s.sentinel != "" {
		conf := filepath.Join(s.dir, "sentinel.conf")
		host, port, _ := net.SplitHostPort(s.sentinel)
		text := fmt.Sprintf("port %d\nbind 127.0.0.1\ndir %s\nsentinel monitor main %s %s 1\nsentinel down-after-milliseconds main 1000\n", s.port, s.dir, host, port)
		if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
			return err
		}
		args = []string{conf, "--sentinel"}
	}
	cmd := exec.Command("redis-server", args...)
	out := &strings.Builder{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		return err
	}
	waited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(waited) }()
	c := redis.NewClient(&redis.Options{Addr: s.Addr, MaxRetries: -1, DialTimeout: 100 * time.Millisecond})
	defer c.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		select {
		case <-waited:
			return fmt.Errorf("redis-server exited: %s", out.String())
		default:
		}
		if c.Ping(context.Background()).Err() == nil {
			s.cmd, s.waited = cmd, waited
			return nil
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			<-waited
			return fmt.Errorf("redis-server on %s does not answer PING: %s", s.Addr, out.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// makeCluster gives the one node every slot and waits for the cluster to
// be ok.
func (s *server) makeCluster(tb tester) {
	c := redis.NewClient(&redis.Options{Addr: s.Addr})
	defer c.Close()
	ctx := context.Background()
	require.NoError(tb, c.Do(ctx, "CLUSTER", "ADDSLOTSRANGE", 0, 16383).Err())
	require.Eventually(tb, func() bool {
		info, err := c.ClusterInfo(ctx).Result()
		return err == nil && strings.Contains(info, "cluster_state:ok")
	}, 10*time.Second, 10*time.Millisecond)
}

// startSentinel starts a Redis Sentinel (redis-server --sentinel) watching
// master, named "main", and waits until it knows the master.
func startSentinel(tb testing.TB, master *server) *server {
	s := &server{Kind: "redis-server", dir: tb.TempDir(), sentinel: master.Addr}
	for try := 0; ; try++ {
		s.port = freePort(tb)
		err := s.start()
		if err == nil {
			break
		}
		require.Less(tb, try, 5, "starting redis-server --sentinel: %v", err)
	}
	tb.Cleanup(s.kill)
	c := redis.NewSentinelClient(&redis.Options{Addr: s.Addr})
	defer c.Close()
	require.Eventually(tb, func() bool {
		addr, err := c.GetMasterAddrByName(context.Background(), "main").Result()
		return err == nil && len(addr) == 2 && net.JoinHostPort(addr[0], addr[1]) == master.Addr
	}, 10*time.Second, 10*time.Millisecond)
	return s
}

// kill kills the server's process (SIGKILL), or closes miniredis.
func (s *server) kill() {
	if s.mini != nil {
		s.mini.Close()
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	<-s.waited
	s.cmd = nil
}

// restart starts the server again on the same port.
func (s *server) restart(tb testing.TB) {
	tb.Helper()
	if s.mini != nil {
		require.NoError(tb, s.mini.Restart())
		return
	}
	var err error
	for range 50 { // the port may linger for a moment
		if err = s.start(); err == nil {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	require.NoError(tb, err)
}

// signal sends sig (SIGSTOP, SIGCONT) to the redis-server.
func (s *server) signal(tb testing.TB, sig syscall.Signal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	require.NotNil(tb, s.cmd)
	require.NoError(tb, s.cmd.Process.Signal(sig))
}

// client returns a client of the server, closed when tb ends.
func (s *server) client(tb testing.TB) redis.UniversalClient {
	c := redis.NewClient(&redis.Options{Addr: s.Addr, DialTimeout: 200 * time.Millisecond})
	tb.Cleanup(func() { _ = c.Close() })
	return c
}

// newTestStore returns a Store on a client of srv with a prefix of its own,
// closed when tb ends.
func newTestStore(tb testing.TB, srv *server, opts ...Option) (*Store, redis.UniversalClient) {
	c := srv.client(tb)
	st, err := New(c, append([]Option{WithPrefix(uniquePrefix(tb))}, opts...)...)
	require.NoError(tb, err)
	tb.Cleanup(func() { _ = st.Close() })
	return st, c
}

var prefixes sync.Map

func uniquePrefix(tb testing.TB) string {
	base := "t" + strconv.FormatInt(time.Now().UnixNano(), 36)
	for i := 0; ; i++ {
		p := base + strconv.Itoa(i)
		if _, loaded := prefixes.LoadOrStore(p, true); !loaded {
			return p
		}
	}
}

// tester is what startServer needs of a test: testing.TB, or the stopper of
// the shared server.
type tester interface {
	Helper()
	Cleanup(func())
	TempDir() string
	Log(args ...any)
	Fatal(args ...any)
	Errorf(format string, args ...any)
	FailNow()
}

// stopper is the tester of the shared server: it runs its cleanups when
// TestMain ends.
type stopper struct {
	mu       sync.Mutex
	cleanups []func()
}

func (r *stopper) Helper() {}
func (r *stopper) Cleanup(f func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cleanups = append(r.cleanups, f)
}
func (r *stopper) TempDir() string {
	d, err := os.MkdirTemp("", "redisstore-test-")
	if err != nil {
		panic(err)
	}
	r.Cleanup(func() { _ = os.RemoveAll(d) })
	return d
}
func (r *stopper) Log(args ...any)                   {}
func (r *stopper) Fatal(args ...any)                 { panic(fmt.Sprint(args...)) }
func (r *stopper) Errorf(format string, args ...any) { panic(fmt.Sprintf(format, args...)) }
func (r *stopper) FailNow()                          { panic("shared redis server: failed") }
func (r *stopper) run() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := len(r.cleanups) - 1; i >= 0; i-- {
		r.cleanups[i]()
	}
}

var (
	sharedOnce sync.Once
	shared     *server
	sharedStop func()
)

// sharedServer returns the package's Redis, started once. Tests that kill
// or stop a server start their own.
func sharedServer(tb testing.TB) *server {
	tb.Helper()
	if os.Getenv("SLUICE_REQUIRE_REDIS") == "1" && os.Getenv("SLUICE_REDIS_ADDR") == "" {
		_, err := exec.LookPath("redis-server")
		require.NoError(tb, err, "SLUICE_REQUIRE_REDIS=1 but redis-server is not on PATH and SLUICE_REDIS_ADDR is not set")
	}
	sharedOnce.Do(func() {
		r := &stopper{}
		shared = startServer(r, false)
		sharedStop = r.run
	})
	if shared.Kind == "miniredis" {
		tb.Log("testing against miniredis (in-process): redis-server is not on PATH and SLUICE_REDIS_ADDR is not set")
	}
	return shared
}

// quiet drops go-redis's log lines (failed dials while a test keeps Redis
// down).
type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

func TestMain(m *testing.M) {
	redis.SetLogger(quiet{})
	code := m.Run()
	if sharedStop != nil {
		sharedStop()
	}
	os.Exit(code)
}
