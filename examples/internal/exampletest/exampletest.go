package exampletest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// RunFunc is an example's run: it serves the example as args say (-addr,
// -rules, -reload: see exampleapp.Run), logging to out, calls ready with the
// address it listens on, and returns when ctx ends, after a graceful
// shutdown.
type RunFunc func(ctx context.Context, args []string, out io.Writer, ready func(addr string)) error

// testRules are the rules the limit tests use: the default rules' kinds,
// with windows long enough that no limit resets during a test on a slow
// machine.
const testRules = `rules:
  - name: hello-rate
    resource: "GET /hello"
    kind: flow
    limit: 3
    window: 1m
  - name: items-per-user
    resource: "GET /items/{id}"
    kind: hotspot
    param: "header:X-User-ID"
    limit: 2
    window: 1m
  - name: slow-inflight
    resource: "GET /slow"
    kind: concurrency
    limit: 1
  - name: unmatched-rate
    resource: "(unmatched)"
    kind: flow
    limit: 2
    window: 1m
`

// syncBuffer is an example's log, written by its goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// server is one example server under test.
type server struct {
	t    *testing.T
	base string
	log  *syncBuffer
	stop context.CancelFunc
	done chan error
}

// start runs the example with args, on 127.0.0.1:0, until the test ends.
func start(t *testing.T, run RunFunc, args ...string) *server {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s := &server{t: t, log: &syncBuffer{}, stop: cancel, done: make(chan error, 1)}
	ready := make(chan string, 1)
	args = append([]string{"-addr", "127.0.0.1:0"}, args...)
	go func() { s.done <- run(ctx, args, s.log, func(addr string) { ready <- addr }) }()
	select {
	case addr := <-ready:
		s.base = "http://" + addr
	case err := <-s.done:
		cancel()
		t.Fatalf("the example did not start: %v\n%s", err, s.log)
	case <-time.After(20 * time.Second):
		cancel()
		t.Fatal("the example did not start")
	}
	t.Cleanup(func() {
		cancel()
		select {
		case <-s.done:
		case <-time.After(20 * time.Second):
			t.Error("the example did not stop")
		}
	})
	return s
}

func (s *server) get(ctx context.Context, path string, header ...string) (int, http.Header, string) {
	s.t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.base+path, nil)
	require.NoError(s.t, err)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(s.t, err)
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	require.NoError(s.t, err)
	return res.StatusCode, res.Header, string(body)
}

// Run tests the example run starts.
func Run(t *testing.T, run RunFunc) {
	t.Run("DefaultRules", func(t *testing.T) {
		s := start(t, run)
		ctx := context.Background()
		assert.Contains(t, s.log.String(), "example listening")
		status, h, body := s.get(ctx, "/hello")
		assert.Equal(t, http.StatusOK, status)
		assert.Equal(t, "hello\n", body)
		assert.Contains(t, h.Get("Content-Type"), "text/plain")

		status, h, body = s.get(ctx, "/items/42", "X-User-ID", "alice")
		assert.Equal(t, http.StatusOK, status)
		assert.Equal(t, "application/json", h.Get("Content-Type"))
		var item map[string]string
		require.NoError(t, json.Unmarshal([]byte(body), &item))
		assert.Equal(t, "42", item["id"])

		status, _, body = s.get(ctx, "/slow?ms=5")
		assert.Equal(t, http.StatusOK, status)
		assert.Equal(t, "slept 5ms\n", body)
		status, _, _ = s.get(ctx, "/slow?ms=x")
		assert.Equal(t, http.StatusBadRequest, status)

		status, _, _ = s.get(ctx, "/fail")
		assert.Equal(t, http.StatusInternalServerError, status)
		status, _, _ = s.get(ctx, "/no-such-route")
		assert.Equal(t, http.StatusNotFound, status)

		// The default rules block the user "blocked" outright.
		status, h, _ = s.get(ctx, "/items/1", "X-User-ID", "blocked")
		assert.Equal(t, http.StatusTooManyRequests, status)
		assert.Equal(t, `"items-per-user";q=0;w=1`, h.Get("RateLimit-Policy"))

		// GET /fail fails: after 5 failures its breaker opens.
		for range 4 {
			status, _, _ = s.get(ctx, "/fail")
			assert.Equal(t, http.StatusInternalServerError, status)
		}
		status, h, body = s.get(ctx, "/fail")
		assert.Equal(t, http.StatusServiceUnavailable, status, "%s", body)
		assert.Contains(t, body, `circuit breaker \"fail-breaker\" is open`)
		assert.NotEmpty(t, h.Get("Retry-After"))

		// The operators' pages: metrics and the dashboard.
		status, h, body = s.get(ctx, "/metrics")
		assert.Equal(t, http.StatusOK, status)
		assert.Contains(t, h.Get("Content-Type"), "text/plain")
		assert.Contains(t, body, `sluice_requests_total{sluice_resource="GET /fail",sluice_result="breaker"} 1`)
		assert.Contains(t, body, `sluice_breaker_state{sluice_breaker_state="open",sluice_rule_kind="breaker",sluice_rule_name="fail-breaker",sluice_rule_resource="GET /fail"} 1`)
		status, h, body = s.get(ctx, "/debug/sluice/")
		assert.Equal(t, http.StatusOK, status)
		assert.Contains(t, h.Get("Content-Type"), "text/html")
		assert.Contains(t, body, "dashboard.js")
		status, _, body = s.get(ctx, "/debug/sluice/api/snapshot")
		assert.Equal(t, http.StatusOK, status)
		assert.Contains(t, body, `"name":"fail-breaker"`)
		assert.NotContains(t, body, "/metrics", "the operators' pages are no resources")
		assert.NotContains(t, body, "/debug")
	})

	t.Run("Limits", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "rules.yaml")
		require.NoError(t, os.WriteFile(file, []byte(testRules), 0o600))
		s := start(t, run, "-rules", file)
		ctx := context.Background()
		assert.Contains(t, s.log.String(), `msg="sluice: rules loaded"`)

		for range 3 {
			status, _, _ := s.get(ctx, "/hello")
			require.Equal(t, http.StatusOK, status)
		}
		status, h, body := s.get(ctx, "/hello")
		assert.Equal(t, http.StatusTooManyRequests, status)
		assert.Equal(t, "application/problem+json", h.Get("Content-Type"))
		assert.Equal(t, `"hello-rate";q=3;w=60`, h.Get("RateLimit-Policy"))
		assert.NotEmpty(t, h.Get("Retry-After"))
		assert.Contains(t, body, `"rule":"hello-rate"`)

		for range 2 {
			status, _, _ = s.get(ctx, "/items/1", "X-User-ID", "alice")
			require.Equal(t, http.StatusOK, status)
		}
		status, _, _ = s.get(ctx, "/items/2", "X-User-ID", "alice")
		assert.Equal(t, http.StatusTooManyRequests, status)
		status, _, _ = s.get(ctx, "/items/2", "X-User-ID", "bob")
		assert.Equal(t, http.StatusOK, status)

		for _, path := range []string{"/a", "/b"} {
			status, _, _ = s.get(ctx, path)
			require.Equal(t, http.StatusNotFound, status)
		}
		status, _, _ = s.get(ctx, "/c")
		assert.Equal(t, http.StatusTooManyRequests, status, "unmatched paths share one limit")

		// One slow request in flight: the next is refused with 503 until
		// it ends. The first sleeps until the test cancels it.
		first, cancelFirst := context.WithCancel(ctx)
		firstDone := make(chan struct{})
		go func() {
			defer close(firstDone)
			for { // until it is the one in flight, not one refused for a probe of the loop below
				req, _ := http.NewRequestWithContext(first, http.MethodGet, s.base+"/slow?ms=10000", nil)
				res, err := http.DefaultClient.Do(req)
				if err != nil {
					return
				}
				res.Body.Close()
				if res.StatusCode != http.StatusServiceUnavailable {
					return
				}
			}
		}()
		deadline := time.Now().Add(8 * time.Second)
		for {
			status, _, _ = s.get(ctx, "/slow?ms=0")
			if status == http.StatusServiceUnavailable || time.Now().After(deadline) {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		assert.Equal(t, http.StatusServiceUnavailable, status, "a second request while one is in flight")
		cancelFirst()
		<-firstDone
	})

	t.Run("BadRulesFile", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "rules.yaml")
		require.NoError(t, os.WriteFile(file, []byte("rules:\n  - resource: x\n    kind: flow\n    limit: -5\n"), 0o600))
		err := run(context.Background(), []string{"-addr", "127.0.0.1:0", "-rules", file}, io.Discard,
			func(string) { t.Error("started with bad rules") })
		require.Error(t, err)
		assert.Contains(t, err.Error(), "limit")
		assert.True(t, strings.Contains(err.Error(), "rules.yaml"), err.Error())
	})

	t.Run("BadArguments", func(t *testing.T) {
		for _, args := range [][]string{{"-nope"}, {"-reload", "soon"}, {"extra"}} {
			err := run(context.Background(), args, io.Discard, func(string) { t.Error("started with bad arguments") })
			assert.Error(t, err, "%q", args)
		}
	})

	t.Run("Reload", func(t *testing.T) { testReload(t, run) })

	t.Run("GracefulShutdown", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "rules.yaml")
		require.NoError(t, os.WriteFile(file, []byte(testRules), 0o600))
		s := start(t, run, "-rules", file)
		type result struct {
			status int
			body   string
		}
		inflight := make(chan result, 1)
		go func() {
			for { // until it is the one in flight, not one refused for a probe of the loop below
				res, err := http.Get(s.base + "/slow?ms=2000")
				if err != nil {
					inflight <- result{}
					return
				}
				body, _ := io.ReadAll(res.Body)
				res.Body.Close()
				if res.StatusCode != http.StatusServiceUnavailable {
					inflight <- result{res.StatusCode, string(body)}
					return
				}
			}
		}()
		// The request is in flight once a second one is refused (the rules
		// allow one GET /slow in flight).
		deadline := time.Now().Add(8 * time.Second)
		for {
			status, _, _ := s.get(context.Background(), "/slow?ms=0")
			if status == http.StatusServiceUnavailable {
				break
			}
			require.True(t, time.Now().Before(deadline), "the slow request never was in flight")
			time.Sleep(5 * time.Millisecond)
		}
		s.stop()
		select {
		case err := <-s.done:
			s.done <- err // for the cleanup
			require.NoError(t, err)
		case <-time.After(20 * time.Second):
			t.Fatal("the example did not stop")
		}
		r := <-inflight
		assert.Equal(t, http.StatusOK, r.status, "the request in flight finished")
		assert.Equal(t, "slept 2s\n", r.body)
		_, err := http.Get(s.base + "/hello")
		assert.Error(t, err, "the server no longer accepts requests")
	})
}

// testReload rewrites the rules file of a running example: the new limit
// applies with the count of the rule carried over, and a broken version is
// logged and ignored.
func testReload(t *testing.T, run RunFunc) {
	file := filepath.Join(t.TempDir(), "rules.yaml")
	require.NoError(t, os.WriteFile(file, []byte(testRules), 0o600))
	s := start(t, run, "-rules", file, "-reload", "10ms")
	ctx := context.Background()
	for range 3 {
		status, _, _ := s.get(ctx, "/hello")
		require.Equal(t, http.StatusOK, status)
	}
	status, h, _ := s.get(ctx, "/hello")
	require.Equal(t, http.StatusTooManyRequests, status)
	assert.Equal(t, `"hello-rate";q=3;w=60`, h.Get("RateLimit-Policy"))

	// hello-rate goes from 3 to 6 per minute: 3 more pass, in place of
	// the 6 a reset count would let through.
	require.NoError(t, os.WriteFile(file, []byte(strings.Replace(testRules, "limit: 3", "limit: 6", 1)), 0o600))
	deadline := time.Now().Add(10 * time.Second)
	for {
		status, _, _ = s.get(ctx, "/hello")
		if status == http.StatusOK || time.Now().After(deadline) {
			break
		}
		require.Equal(t, http.StatusTooManyRequests, status)
		time.Sleep(5 * time.Millisecond)
	}
	require.Equal(t, http.StatusOK, status, "the new limit never applied\n%s", s.log)
	passed := 1
	for {
		status, h, _ = s.get(ctx, "/hello")
		if status != http.StatusOK {
			break
		}
		passed++
		require.Less(t, passed, 10)
	}
	assert.Equal(t, 3, passed, "the count of hello-rate carried over")
	assert.Equal(t, http.StatusTooManyRequests, status)
	assert.Equal(t, `"hello-rate";q=6;w=60`, h.Get("RateLimit-Policy"))
	// The new rules apply before the watcher logs them: wait for the line.
	reloaded := `msg="sluice: rules reloaded" path=` + file + ` rules=4 changed=[hello-rate]`
	assert.Eventually(t, func() bool { return strings.Contains(s.log.String(), reloaded) }, 10*time.Second, 5*time.Millisecond, "%s", s.log)

	// A broken version is logged, and the rules in force stay.
	require.NoError(t, os.WriteFile(file, []byte(strings.Replace(testRules, "limit: 3", "limit: -3", 1)), 0o600))
	// (The watcher may first read the file cut short by the write, and
	// reject it as empty.)
	rejected := `level=WARN msg="sluice: rules file rejected; the rules in force are kept" path=` + file +
		` err="rules[0] (hello-rate): line 5: limit must be >= 0, got -3"`
	require.Eventually(t, func() bool { return strings.Contains(s.log.String(), rejected) }, 10*time.Second, 5*time.Millisecond, "%s", s.log)
	status, h, _ = s.get(ctx, "/hello")
	assert.Equal(t, http.StatusTooManyRequests, status)
	assert.Equal(t, `"hello-rate";q=6;w=60`, h.Get("RateLimit-Policy"))
}
