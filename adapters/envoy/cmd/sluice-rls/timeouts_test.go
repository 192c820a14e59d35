package main

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHTTPTimeouts: the HTTP address closes a connection whose client sends
// nothing, sends its headers or body slowly, or keeps it idle after a
// request, once the timeouts set by -http-read-timeout and
// -http-idle-timeout pass (200ms here; a connection still open after 5s
// fails). Before, an idle kept-alive connection stayed open for ever, and
// slow headers for 10s.
func TestHTTPTimeouts(t *testing.T) {
	_, addr, _ := instance(t, "-config", configDir(t), "-pprof",
		"-http-read-timeout", "200ms", "-http-write-timeout", "5s", "-http-idle-timeout", "200ms")
	// closed asserts that the server closes c: reading it ends without the
	// client's own deadline passing.
	closed := func(t *testing.T, c net.Conn) {
		t.Helper()
		require.NoError(t, c.SetReadDeadline(time.Now().Add(5*time.Second)))
		_, err := io.Copy(io.Discard, c)
		assert.False(t, errors.Is(err, os.ErrDeadlineExceeded), "the connection is still open after 5s")
	}
	dial := func(t *testing.T) net.Conn {
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		t.Cleanup(func() { c.Close() })
		return c
	}
	t.Run("silent", func(t *testing.T) {
		closed(t, dial(t))
	})
	t.Run("slow headers", func(t *testing.T) {
		c := dial(t)
		_, err := io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: rls\r\n")
		require.NoError(t, err)
		done := make(chan struct{})
		defer close(done)
		go func() { // a header line every 50ms, never the blank line
			for {
				select {
				case <-done:
					return
				case <-time.After(50 * time.Millisecond):
					if _, err := io.WriteString(c, "X-Slow: 1\r\n"); err != nil {
						return
					}
				}
			}
		}()
		closed(t, c)
	})
	t.Run("slow body", func(t *testing.T) {
		c := dial(t)
		_, err := io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: rls\r\nContent-Length: 100\r\n\r\nx")
		require.NoError(t, err)
		closed(t, c)
	})
	t.Run("idle after a request", func(t *testing.T) {
		c := dial(t)
		_, err := io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: rls\r\n\r\n")
		require.NoError(t, err)
		br := bufio.NewReader(c)
		resp, err := http.ReadResponse(br, nil)
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
		require.False(t, resp.Close, "kept alive")
		require.NoError(t, c.SetReadDeadline(time.Now().Add(5*time.Second)))
		_, err = io.Copy(io.Discard, br)
		assert.False(t, errors.Is(err, os.ErrDeadlineExceeded), "the idle connection is still open after 5s")
	})
	t.Run("profile outlives the read timeout", func(t *testing.T) {
		start := time.Now()
		resp, err := http.Get("http://" + addr + "/debug/pprof/profile?seconds=1")
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		assert.Equal(t, http.StatusOK, resp.StatusCode)
		assert.GreaterOrEqual(t, time.Since(start), time.Second, "a 1s profile is not cut at the 200ms read timeout")
		assert.Greater(t, resp.ContentLength, int64(0), "a profile")
	})
}

// TestHTTPTimeoutsPositive: a timeout of 0 or less, which would mean none
// (or cut every connection at once), is a usage error.
func TestHTTPTimeoutsPositive(t *testing.T) {
	for _, d := range []string{"0s", "-1s"} {
		_, err := parse([]string{"-config", "rules", "-http-idle-timeout", d}, func(string) string { return "" }, io.Discard)
		require.ErrorContains(t, err, "-http-idle-timeout must be > 0, got "+d)
	}
}
