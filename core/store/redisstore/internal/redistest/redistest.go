package redistest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
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
)

// The environment variables the package reads.
const (
	// envAddr is the address (host:port) of a Redis the tests use instead
	// of starting redis-server. Start takes it; StartOwned does not.
	envAddr = "SLUICE_REDIS_ADDR"
	// envRequire set to "1" makes a missing real Redis (no envAddr, no
	// redis-server on PATH) a test failure rather than a fallback to
	// miniredis.
	envRequire = "SLUICE_REQUIRE_REDIS"
)

// The kinds of Server.
const (
	// kindProcess is a redis-server the test started, and owns.
	kindProcess = "redis-server"
	// kindExternal is the Redis at SLUICE_REDIS_ADDR, which the test only
	// uses.
	kindExternal = "external"
	// kindMiniredis is an in-process miniredis, the fallback without a real
	// Redis. It answers the commands of a single node (scripts, TIME and
	// the CLUSTER commands of a one-node cluster among them).
	kindMiniredis = "miniredis"
)

// startTimeout bounds the wait for a new redis-server to answer PING.
const startTimeout = 10 * time.Second

// Server is a Redis for tests. Addr and Kind do not change; Kill, Restart,
// Freeze and Thaw may be called from any goroutine.
type Server struct {
	// Addr is the server's address, host:port.
	Addr string
	// Kind is what the server is: "redis-server" (started by the test,
	// which owns it), "external" (the one at SLUICE_REDIS_ADDR, which the
	// test only uses) or "miniredis" (in-process, the fallback without a
	// real Redis).
	Kind string

	port     int
	dir      string // a redis-server's working directory
	cluster  bool
	sentinel string // the master a sentinel watches

	mu     sync.Mutex
	cmd    *exec.Cmd     // nil when not running
	waited chan struct{} // closed when cmd has exited
	mini   *miniredis.Miniredis
}

// Real reports whether the server is a real Redis (not miniredis).
func (s *Server) Real() bool { return s.Kind != kindMiniredis }

// owned reports whether the test owns the server: it may kill and restart
// it (not an external server).
func (s *Server) owned() bool { return s.Kind != kindExternal }

// hasRedisServer reports whether redis-server is on PATH.
func hasRedisServer() bool {
	_, err := exec.LookPath("redis-server")
	return err == nil
}

// required reports whether envRequire forbids the miniredis fallback.
func required() bool { return os.Getenv(envRequire) == "1" }

const noRedis = "redis-server is not on PATH and " + envAddr + " is not set"

// Start returns a Redis for tb, stopped when tb ends: the one at
// SLUICE_REDIS_ADDR (which must answer PING), or a redis-server it starts,
// or miniredis (logged; a failure when SLUICE_REQUIRE_REDIS is "1").
func Start(tb testing.TB) *Server {
	tb.Helper()
	if addr := os.Getenv(envAddr); addr != "" {
		s, err := external(addr)
		if err != nil {
			tb.Fatal(err)
		}
		return s
	}
	return startOwned(tb)
}

// StartOwned returns a Redis the test owns, stopped when tb ends: a
// redis-server it starts, or miniredis (logged; a failure when
// SLUICE_REQUIRE_REDIS is "1"). Without redis-server on PATH but with
// SLUICE_REDIS_ADDR set, it skips the test: a test does not kill a Redis it
// did not start.
func StartOwned(tb testing.TB) *Server {
	tb.Helper()
	if !hasRedisServer() && os.Getenv(envAddr) != "" {
		tb.Skip("redis-server is not on PATH and the test does not kill the Redis at " + envAddr)
	}
	return startOwned(tb)
}

func startOwned(tb testing.TB) *Server {
	tb.Helper()
	if hasRedisServer() {
		s, err := launch(tb.TempDir(), false, "")
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(s.Kill)
		return s
	}
	if required() {
		tb.Fatal(envRequire + "=1 but " + noRedis)
	}
	s, err := startMini()
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(s.Kill)
	tb.Log(noRedis + ": testing against miniredis (in-process)")
	return s
}

// startCluster returns a one-node Redis Cluster owning every slot, stopped
// when tb ends, and true; or, without redis-server on PATH, miniredis (as
// Start falls back to it) and true, or false when envAddr is set (there is no
// cluster to test then).
func startCluster(tb testing.TB) (*Server, bool) {
	tb.Helper()
	if !hasRedisServer() {
		if os.Getenv(envAddr) != "" {
			return nil, false
		}
		return startOwned(tb), true
	}
	s, err := launch(tb.TempDir(), true, "")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(s.Kill)
	return s, true
}

// StartSentinel starts a Redis Sentinel (redis-server --sentinel) that
// watches master under the name "main", and waits until it knows the
// master. It skips the test without redis-server on PATH.
func StartSentinel(tb testing.TB, master *Server) *Server {
	tb.Helper()
	if !hasRedisServer() {
		tb.Skip("redis-server is not on PATH: no Sentinel to test")
	}
	s, err := launch(tb.TempDir(), false, master.Addr)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(s.Kill)
	return s
}

// external checks the Redis at addr.
func external(addr string) (*Server, error) {
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	if err := c.Ping(ctx).Err(); err != nil {
		return nil, fmt.Errorf("%s=%s: %w", envAddr, addr, err)
	}
	return &Server{Addr: addr, Kind: kindExternal}, nil
}

func startMini() (*Server, error) {
	m := miniredis.NewMiniRedis()
	if err := m.Start(); err != nil {
		return nil, fmt.Errorf("starting miniredis: %w", err)
	}
	return &Server{Addr: m.Addr(), Kind: kindMiniredis, mini: m}, nil
}

// launch starts a redis-server working in dir on a free port: a cluster
// node owning every slot when cluster is set, a sentinel of the master at
// sentinelOf when that is not "".
func launch(dir string, cluster bool, sentinelOf string) (*Server, error) {
	s := &Server{Kind: kindProcess, dir: dir, cluster: cluster, sentinel: sentinelOf}
	var err error
	for range 5 { // another process may take the free port first
		if s.port, err = freePort(); err != nil {
			return nil, err
		}
		if err = s.start(); err == nil {
			break
		}
	}
	if err != nil {
		return nil, fmt.Errorf("starting redis-server: %w", err)
	}
	switch {
	case cluster:
		err = s.makeCluster()
	case sentinelOf != "":
		err = s.awaitMaster()
	}
	if err != nil {
		s.Kill()
		return nil, err
	}
	return s, nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// start runs redis-server on s.port and waits until it answers PING.
func (s *Server) start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		return errors.New("redistest: the server is running")
	}
	port := strconv.Itoa(s.port)
	s.Addr = net.JoinHostPort("127.0.0.1", port)
	args := []string{"--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--dir", s.dir, "--protected-mode", "no", "--loglevel", "warning"}
	if s.cluster {
		args = append(args, "--cluster-enabled", "yes", "--cluster-config-file", filepath.Join(s.dir, "nodes.conf"))
	}
	if s.sentinel != "" {
		host, mport, err := net.SplitHostPort(s.sentinel)
		if err != nil {
			return fmt.Errorf("redistest: master address %q: %w", s.sentinel, err)
		}
		conf := filepath.Join(s.dir, "sentinel.conf")
		text := fmt.Sprintf("port %s\nbind 127.0.0.1\ndir %s\nsentinel monitor main %s %s 1\nsentinel down-after-milliseconds main 1000\n",
			port, s.dir, host, mport)
		if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
			return err
		}
		args = []string{conf, "--sentinel"}
	}
	cmd := exec.Command("redis-server", args...)
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		return err
	}
	waited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(waited) }()
	c := redis.NewClient(&redis.Options{Addr: s.Addr, MaxRetries: -1, DialTimeout: 100 * time.Millisecond})
	defer c.Close()
	deadline := time.Now().Add(startTimeout)
	for {
		select {
		case <-waited:
			return fmt.Errorf("redis-server on port %s exited: %s", port, out.String())
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
func (s *Server) makeCluster() error {
	c := redis.NewClient(&redis.Options{Addr: s.Addr})
	defer c.Close()
	ctx := context.Background()
	if err := c.Do(ctx, "CLUSTER", "ADDSLOTSRANGE", 0, 16383).Err(); err != nil {
		return fmt.Errorf("redistest: CLUSTER ADDSLOTSRANGE: %w", err)
	}
	return poll(func() bool {
		info, err := c.ClusterInfo(ctx).Result()
		return err == nil && strings.Contains(info, "cluster_state:ok")
	}, "the cluster is not ok")
}

// awaitMaster waits until the sentinel knows its master.
func (s *Server) awaitMaster() error {
	c := redis.NewSentinelClient(&redis.Options{Addr: s.Addr})
	defer c.Close()
	return poll(func() bool {
		addr, err := c.GetMasterAddrByName(context.Background(), "main").Result()
		return err == nil && len(addr) == 2 && net.JoinHostPort(addr[0], addr[1]) == s.sentinel
	}, "the sentinel does not know its master")
}

// poll calls ok every 10ms until it returns true, or fails with msg after
// startTimeout.
func poll(ok func() bool, msg string) error {
	deadline := time.Now().Add(startTimeout)
	for !ok() {
		if time.Now().After(deadline) {
			return errors.New("redistest: " + msg)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return nil
}

// Kill kills the server's process (SIGKILL) and waits for it to exit, or
// closes miniredis; connections break at once and new ones are refused.
// It does nothing to an external server, or to a server already killed.
func (s *Server) Kill() {
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

// Restart starts the server again on the same port after Kill and waits
// until it answers PING. A killed redis-server comes back empty (it
// persists nothing); miniredis keeps its data.
func (s *Server) Restart(tb testing.TB) {
	tb.Helper()
	if !s.owned() {
		tb.Fatal("redistest: Restart of a Redis the test does not own")
	}
	if s.mini != nil {
		if err := s.mini.Restart(); err != nil {
			tb.Fatal(err)
		}
		return
	}
	var err error
	deadline := time.Now().Add(startTimeout)
	for { // the port may linger for a moment
		if err = s.start(); err == nil {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("redistest: restarting redis-server on %s: %v", s.Addr, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Freeze stops the redis-server (SIGSTOP): its connections stay open and
// nothing answers, as with a Redis that hangs. Thaw resumes it. Freeze skips
// the test for miniredis, which cannot be frozen, and fails it for a
// server that is not running or not owned.
func (s *Server) Freeze(tb testing.TB) {
	tb.Helper()
	if s.Kind == kindMiniredis {
		tb.Skip("miniredis cannot be frozen")
	}
	s.signal(tb, syscall.SIGSTOP)
}

// Thaw resumes a frozen redis-server (SIGCONT).
func (s *Server) Thaw(tb testing.TB) {
	tb.Helper()
	s.signal(tb, syscall.SIGCONT)
}

func (s *Server) signal(tb testing.TB, sig syscall.Signal) {
	tb.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		tb.Fatalf("redistest: %v to a redis-server that is not running (or not the test's)", sig)
	}
	if err := s.cmd.Process.Signal(sig); err != nil {
		tb.Fatal(err)
	}
}

// Client returns a client of the server, closed when tb ends. Its
// DialTimeout is 200ms; configure functions may change any option (Addr
// is set first).
func (s *Server) Client(tb testing.TB, configure ...func(*redis.Options)) *redis.Client {
	o := &redis.Options{Addr: s.Addr, DialTimeout: 200 * time.Millisecond}
	for _, f := range configure {
		f(o)
	}
	c := redis.NewClient(o)
	tb.Cleanup(func() { _ = c.Close() })
	return c
}

// UniquePrefix returns a key prefix of 17 bytes, a letter and random hex
// digits, that no other caller gets, in this process or another: tests
// sharing a Redis put their keys under prefixes of their own.
func UniquePrefix() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // never fails
	return "t" + hex.EncodeToString(b[:])
}

// QuietRedisLogs drops go-redis's log lines (its failed dials while a test
// keeps Redis down). go-redis's logger is global: call it from TestMain.
func QuietRedisLogs() { redis.SetLogger(quiet{}) }

type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

// syncBuffer is a redis-server's output, read while the process may write.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.b.Len() < 64<<10 {
		b.b.Write(p)
	}
	return len(p), nil
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
