package main

import (
	"context"
	"encoding/json"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/examples/distributed/internal/server"
	"github.com/sluicekit/sluice/examples/internal/exampletest"
)

func TestMain(m *testing.M) {
	exampletest.QuietRedisLogs() // the test with Redis down dials in vain
	os.Exit(m.Run())
}

// testRules are the default rules' kinds with windows of an hour, so that
// every request of a test falls in one window however slow the machine.
const testRules = `rules:
  - name: hello-global
    resource: "GET /hello"
    kind: flow
    store: redis
    limit: 30
    window: 1h
    localLimit: 3
  - name: items-per-user
    resource: "GET /items/{id}"
    kind: hotspot
    param: "header:X-User-ID"
    store: redis
    limit: 4
    window: 1h
    localLimit: 1
`

func rulesFile(t *testing.T, text string) string {
	file := filepath.Join(t.TempDir(), "rules.yaml")
	require.NoError(t, os.WriteFile(file, []byte(text), 0o600))
	return file
}

// start runs an instance of the example until the test ends, and returns
// its base URL.
func start(t *testing.T, cfg server.Config) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	ready := make(chan string, 1)
	cfg.Addr = "127.0.0.1:0"
	cfg.Logf = t.Logf
	// Generous: the tests assert "no fallback", which a call slower than
	// the 50ms default on a loaded CI machine would break.
	cfg.Timeout = 2 * time.Second
	go func() { done <- run(ctx, cfg, func(addr string) { ready <- addr }) }()
	var addr string
	select {
	case addr = <-ready:
	case err := <-done:
		cancel()
		t.Fatalf("the instance did not start: %v", err)
	}
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			assert.NoError(t, err, "a graceful shutdown")
		case <-time.After(20 * time.Second):
			t.Error("the instance did not stop")
		}
	})
	return "http://" + addr
}

type response struct {
	status   int
	instance string
	body     string
	header   http.Header
}

func get(t *testing.T, url string, header ...string) response {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return response{res.StatusCode, res.Header.Get("X-Instance"), string(body), res.Header}
}

func status(t *testing.T, base string) server.Status {
	t.Helper()
	r := get(t, base+"/status")
	require.Equal(t, http.StatusOK, r.status)
	var s server.Status
	require.NoError(t, json.Unmarshal([]byte(r.body), &s))
	return s
}

// TestInstancesShareLimits runs 3 instances on one Redis: 30 goroutines
// sending requests to instances picked at random get exactly the global
// limit admitted in total, and each user exactly its limit.
func TestInstancesShareLimits(t *testing.T) {
	addr, prefix := exampletest.Redis(t)
	file := rulesFile(t, testRules)
	var bases []string
	for _, name := range []string{"a", "b", "c"} {
		bases = append(bases, start(t, server.Config{Redis: addr, RulesFile: file, Name: name, Prefix: prefix}))
	}

	var mu sync.Mutex
	passed := map[string]int{} // by instance
	users := map[string]int{}  // admitted, by user
	blocked := 0
	var wg sync.WaitGroup
	for g := range 30 {
		wg.Go(func() {
			for i := range 6 {
				base := bases[rand.IntN(len(bases))]
				r := get(t, base+"/hello")
				user := []string{"alice", "bob"}[(g+i)%2]
				u := get(t, base+"/items/7", "X-User-ID", user)
				mu.Lock()
				switch r.status {
				case http.StatusOK:
					passed[r.instance]++
					assert.Equal(t, "hello from "+r.instance+"\n", r.body)
				case http.StatusTooManyRequests:
					blocked++
					assert.Equal(t, `"hello-global";q=30;w=3600`, r.header.Get("RateLimit-Policy"))
				default:
					t.Errorf("GET /hello: %d %s", r.status, r.body)
				}
				if u.status == http.StatusOK {
					users[user]++
				} else {
					assert.Equal(t, http.StatusTooManyRequests, u.status)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	total := 0
	for _, n := range passed {
		total += n
	}
	t.Logf("GET /hello: %d admitted (%v), %d blocked", total, passed, blocked)
	assert.Equal(t, 30, total, "the limit of 30 per window, for the three instances together")
	assert.Equal(t, 180, total+blocked)
	assert.Len(t, passed, 3, "every instance admitted some: %v", passed)
	assert.Equal(t, map[string]int{"alice": 4, "bob": 4}, users, "4 per user, for the three instances together")
	for i, base := range bases {
		s := status(t, base)
		assert.Equal(t, []string{"a", "b", "c"}[i], s.Instance)
		assert.Equal(t, []server.StoreState{{Name: "redis", Healthy: true}}, s.Stores, "no fallback")
	}
}

// TestDefaultRules serves every route under the embedded rules.
func TestDefaultRules(t *testing.T) {
	addr, prefix := exampletest.Redis(t)
	base := start(t, server.Config{Redis: addr, Name: "solo", Prefix: prefix})
	r := get(t, base+"/hello")
	assert.Equal(t, http.StatusOK, r.status)
	assert.Equal(t, "hello from solo\n", r.body)
	assert.Equal(t, "solo", r.instance)
	r = get(t, base+"/search?q=x")
	assert.Equal(t, http.StatusOK, r.status)
	assert.JSONEq(t, `{"q":"x","instance":"solo"}`, r.body)
	r = get(t, base+"/items/42", "X-User-ID", "alice")
	assert.Equal(t, http.StatusOK, r.status)
	assert.JSONEq(t, `{"id":"42","instance":"solo"}`, r.body)

	s := status(t, base)
	assert.Equal(t, addr, s.Redis)
	assert.Equal(t, []server.StoreState{{Name: "redis", Healthy: true}}, s.Stores)
	modes := map[string]string{}
	for _, rule := range s.Rules {
		assert.Equal(t, "redis", rule.Store, rule.Name)
		modes[rule.Name] = string(rule.Mode)
	}
	assert.Equal(t, map[string]string{"hello-global": "exact", "search-global": "approximate", "items-per-user": "exact"}, modes)

	// The default limit of GET /hello is 20 a second for all instances.
	codes := map[int]int{}
	for range 25 {
		codes[get(t, base+"/hello").status]++
	}
	assert.NotZero(t, codes[http.StatusTooManyRequests], "%v", codes)
}

// TestRedisDown starts an instance whose Redis does not answer (a closed
// port): GET /status says so before any request (it showed the store
// healthy until calls had failed, though startup logged that Redis did not
// answer); it serves anyway, its rules fall back to their local limits,
// and GET /status shows the fallbacks.
func TestRedisDown(t *testing.T) {
	base := start(t, server.Config{Redis: exampletest.DeadRedis(t), RulesFile: rulesFile(t, testRules), Name: "alone"})
	s := status(t, base)
	require.Len(t, s.Stores, 1)
	assert.False(t, s.Stores[0].Healthy, "the startup check failed")
	assert.NotEmpty(t, s.SyncError)
	assert.Zero(t, s.Stores[0].Errors, "no call yet")
	codes := map[int]int{}
	for range 8 {
		codes[get(t, base+"/hello").status]++
	}
	assert.Equal(t, map[int]int{http.StatusOK: 3, http.StatusTooManyRequests: 5}, codes, "the local limit of 3")
	s = status(t, base)
	require.Len(t, s.Stores, 1)
	assert.False(t, s.Stores[0].Healthy)
	assert.Equal(t, int64(8), s.Stores[0].Fallbacks)
	assert.NotZero(t, s.Stores[0].Errors)
}

func TestBadRules(t *testing.T) {
	file := rulesFile(t, "rules:\n  - resource: x\n    kind: flow\n    limit: 5\n    store: memcached\n")
	err := run(context.Background(), server.Config{Addr: "127.0.0.1:0", RulesFile: file, Logf: t.Logf}, func(string) { t.Error("started with bad rules") })
	require.Error(t, err)
	assert.Contains(t, err.Error(), "memcached")
	assert.Contains(t, err.Error(), "rules.yaml: rules[0]")
}

// TestGracefulShutdown: when its context ends, an instance shuts its
// server down, closes its Guard, store and client, and returns nil.
func TestGracefulShutdown(t *testing.T) {
	addr, prefix := exampletest.Redis(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ready := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, server.Config{Addr: "127.0.0.1:0", Redis: addr, Prefix: prefix, Logf: t.Logf},
			func(addr string) { ready <- addr })
	}()
	base := "http://" + <-ready
	assert.Equal(t, http.StatusOK, get(t, base+"/hello").status)
	cancel()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(20 * time.Second):
		t.Fatal("the instance did not stop")
	}
	_, err := http.Get(base + "/hello")
	assert.Error(t, err, "closed")
}
