package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	ratelimitv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

const config = `domain: edge
descriptors:
  - key: remote_address
    rate_limit: {unit: minute, requests_per_unit: 5}
  - key: generic_key
    value: shared
    rate_limit: {unit: hour, requests_per_unit: 30}
`

// instance runs sluice-rls with args until the test ends; it returns its
// gRPC connection and HTTP address, and a function that stops it and
// returns its exit code.
func instance(t *testing.T, args ...string) (*grpc.ClientConn, string, func() int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan [2]string, 1)
	code := make(chan int, 1)
	var log bytes.Buffer
	var mu sync.Mutex
	go func() {
		code <- run(ctx, append([]string{"-listen", "127.0.0.1:0", "-http", "127.0.0.1:0"}, args...),
			func(string) string { return "" }, writerFunc(func(p []byte) (int, error) { mu.Lock(); defer mu.Unlock(); return log.Write(p) }), ready)
	}()
	var addrs [2]string
	select {
	case addrs = <-ready:
	case c := <-code:
		cancel()
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("sluice-rls exited with %d:\n%s", c, log.String())
	}
	conn, err := grpc.NewClient(addrs[0], grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	stopped := false
	var exit int
	stop := func() int {
		if !stopped {
			stopped = true
			cancel()
			exit = <-code
			_ = conn.Close()
		}
		return exit
	}
	t.Cleanup(func() { stop() })
	return conn, addrs[1], stop
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

func configDir(t *testing.T) string {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "edge.yaml"), []byte(config), 0o600))
	return dir
}

func req(kv ...string) *rlsv3.RateLimitRequest {
	d := &ratelimitv3.RateLimitDescriptor{}
	for i := 0; i+1 < len(kv); i += 2 {
		d.Entries = append(d.Entries, &ratelimitv3.RateLimitDescriptor_Entry{Key: kv[i], Value: kv[i+1]})
	}
	return &rlsv3.RateLimitRequest{Domain: "edge", Descriptors: []*ratelimitv3.RateLimitDescriptor{d}}
}

func TestServeHealthMetricsStop(t *testing.T) {
	conn, httpAddr, stop := instance(t, "-config", configDir(t))
	ctx := context.Background()
	for _, svc := range []string{"", "envoy.service.ratelimit.v3.RateLimitService"} {
		h, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{Service: svc})
		require.NoError(t, err)
		assert.Equal(t, healthpb.HealthCheckResponse_SERVING, h.Status, svc)
	}
	c := rlsv3.NewRateLimitServiceClient(conn)
	r, err := c.ShouldRateLimit(ctx, req("remote_address", "1.2.3.4"))
	require.NoError(t, err)
	assert.Equal(t, uint32(4), r.Statuses[0].LimitRemaining)
	for path, want := range map[string]string{"/healthz": "ok", "/metrics": `ratelimit_service_rate_limit_total_hits{domain="edge",key="remote_address"} 1`, "/dashboard/": "<html"} {
		resp, err := http.Get("http://" + httpAddr + path)
		require.NoError(t, err)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		assert.Equal(t, http.StatusOK, resp.StatusCode, path)
		assert.Contains(t, string(body), want, path)
	}
	assert.Equal(t, 0, stop(), "a stop on the signal exits 0")
	_, err = c.ShouldRateLimit(ctx, req("remote_address", "1.2.3.4"))
	assert.Error(t, err, "stopped")
}

// TestPprof: with -pprof the HTTP address serves Go's profiles; without it,
// it does not.
func TestPprof(t *testing.T) {
	get := func(addr, path string) int {
		resp, err := http.Get("http://" + addr + path)
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	_, off, _ := instance(t, "-config", configDir(t))
	assert.Equal(t, http.StatusNotFound, get(off, "/debug/pprof/heap"))
	_, on, _ := instance(t, "-config", configDir(t), "-pprof")
	assert.Equal(t, http.StatusOK, get(on, "/debug/pprof/heap"))
	assert.Equal(t, http.StatusOK, get(on, "/debug/pprof/profile?seconds=1"))

	var out bytes.Buffer
	_, err := parse([]string{"-config", "rules", "-http", "", "-pprof"}, func(string) string { return "" }, &out)
	require.ErrorContains(t, err, "-pprof needs an -http address")
}

func TestBadConfigRefusesToStart(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "edge.yaml"), []byte("domain: edge\ndescriptors:\n  - key: k\n    rate_limit: {unit: fortnight}\n"), 0o600))
	var out bytes.Buffer
	code := run(context.Background(), []string{"-config", dir, "-listen", "127.0.0.1:0", "-http", ""}, func(string) string { return "" }, &out, nil)
	assert.Equal(t, 1, code)
	assert.Contains(t, out.String(), "edge.yaml:4")
	assert.Equal(t, 2, run(context.Background(), nil, func(string) string { return "" }, io.Discard, nil))
	out.Reset()
	assert.Equal(t, 1, run(context.Background(), []string{"-config", configDir(t), "-redis", "redis://h:port:x/", "-http", ""}, func(string) string { return "" }, &out, nil))
	assert.Contains(t, out.String(), "-redis:")
	assert.Equal(t, 2, run(context.Background(), []string{"-config", dir}, func(k string) string {
		if k == "SLUICE_RLS_MODE" {
			return "fuzzy"
		}
		return ""
	}, io.Discard, nil))
}

// redisServer starts a redis-server on a free port for the test, or skips
// it when there is none.
func redisServer(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("no redis-server on PATH")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no")
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	for range 500 { // until it listens: a hang guard, not a timing bound
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return addr
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("redis-server did not start")
	return ""
}

// TestRedisExactSharedByInstances: two sluice-rls instances on one Redis,
// asked at once by many clients, admit exactly the limit together.
func TestRedisExactSharedByInstances(t *testing.T) {
	addr := redisServer(t)
	dir := configDir(t)
	conns := make([]*grpc.ClientConn, 2)
	for i := range conns {
		target := addr
		if i == 1 {
			target = "redis://" + addr + "/0" // the same Redis, as a URL
		}
		// A slow Redis must not fall back to local limits here (a loaded
		// machine under -race): a long timeout, and closed on failure.
		conns[i], _, _ = instance(t, "-config", dir, "-redis", target, "-http", "", "-redis-timeout", "30s", "-on-failure", "closed")
	}
	const callers = 40
	var wg sync.WaitGroup
	var mu sync.Mutex
	ok, over := 0, 0
	for i := range callers {
		wg.Go(func() {
			c := rlsv3.NewRateLimitServiceClient(conns[i%2])
			r, err := c.ShouldRateLimit(context.Background(), req("generic_key", "shared"))
			if !assert.NoError(t, err) {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			if r.OverallCode == rlsv3.RateLimitResponse_OK {
				ok++
			} else {
				over++
			}
		})
	}
	wg.Wait()
	assert.Equal(t, 30, ok)
	assert.Equal(t, callers-30, over)
}

// TestRedisDown: with Redis unreachable, each failure policy decides: closed
// rejects, open admits, local applies the limit in this process.
func TestRedisDown(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	dead := l.Addr().String()
	l.Close()
	dir := configDir(t)
	for policy, want := range map[string][]rlsv3.RateLimitResponse_Code{
		"closed": {rlsv3.RateLimitResponse_OVER_LIMIT, rlsv3.RateLimitResponse_OVER_LIMIT},
		"open":   {rlsv3.RateLimitResponse_OK, rlsv3.RateLimitResponse_OK},
		"local":  {rlsv3.RateLimitResponse_OK, rlsv3.RateLimitResponse_OK},
	} {
		conn, _, _ := instance(t, "-config", dir, "-redis", dead, "-on-failure", policy, "-http", "")
		c := rlsv3.NewRateLimitServiceClient(conn)
		for i, w := range want {
			r, err := c.ShouldRateLimit(context.Background(), req("generic_key", "shared"))
			require.NoError(t, err, policy)
			assert.Equal(t, w, r.OverallCode, "%s: request %d", policy, i)
		}
	}
	// local: the limit holds in the process (30 an hour).
	conn, _, _ := instance(t, "-config", dir, "-redis", dead, "-on-failure", "local", "-http", "")
	c := rlsv3.NewRateLimitServiceClient(conn)
	ok := 0
	for range 35 {
		r, err := c.ShouldRateLimit(context.Background(), req("generic_key", "shared"))
		require.NoError(t, err)
		if r.OverallCode == rlsv3.RateLimitResponse_OK {
			ok++
		}
	}
	assert.Equal(t, 30, ok)
}

// TestRedisApproximate: in approximate mode one instance, asked one call at
// a time, admits the limit: decisions are local, counts pushed to Redis.
func TestRedisApproximate(t *testing.T) {
	addr := redisServer(t)
	conn, _, _ := instance(t, "-config", configDir(t), "-redis", addr, "-mode", "approximate", "-http", "", "-redis-timeout", "30s", "-on-failure", "closed")
	c := rlsv3.NewRateLimitServiceClient(conn)
	ok := 0
	for range 35 {
		r, err := c.ShouldRateLimit(context.Background(), req("generic_key", "shared"))
		require.NoError(t, err)
		if r.OverallCode == rlsv3.RateLimitResponse_OK {
			ok++
		}
	}
	assert.Equal(t, 30, ok)
}
