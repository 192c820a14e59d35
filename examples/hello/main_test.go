package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestQuickStartInREADME checks that the README's quick start is this
// program and its rules file, as they are.
func TestQuickStartInREADME(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	require.NoError(t, err)
	for file, lang := range map[string]string{"main.go": "go", "rules.yaml": "yaml"} {
		body, err := os.ReadFile(file)
		require.NoError(t, err)
		assert.Contains(t, string(readme), "```"+lang+"\n"+string(body)+"```\n", "README.md shows examples/hello/%s as it is", file)
	}
}

// TestHello builds the program, runs it with its rules file on a free
// loopback port, and checks both rules over HTTP.
func TestHello(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "hello")
	build := exec.Command("go", buildArgs(bin)...)
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)

	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), "ADDR="+addr)
	cmd.Stderr = io.Discard
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})

	get := func(path, user string) *http.Response {
		req, err := http.NewRequestWithContext(context.Background(), "GET", "http://"+addr+path, nil)
		require.NoError(t, err)
		if user != "" {
			req.Header.Set("X-User-ID", user)
		}
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return res
	}
	require.Eventually(t, func() bool {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
		}
		return err == nil
	}, 60*time.Second, 10*time.Millisecond, "the server listens")

	// The 5-per-second rule blocks within a second's worth of requests,
	// however slowly a busy host sends them (a request takes far less
	// than 200 ms). A blocked response says when to retry.
	for user, rule := range map[string]struct {
		path  string
		limit int
	}{"": {"/hello", 5}, "alice": {"/items/1", 3}} {
		passed := 0
		var blocked *http.Response
		for range 200 {
			res := get(rule.path, user)
			if res.StatusCode == http.StatusTooManyRequests {
				blocked = res
				break
			}
			require.Equal(t, http.StatusOK, res.StatusCode)
			passed++
		}
		require.NotNil(t, blocked, "%s: a 429 within 200 requests", rule.path)
		assert.GreaterOrEqual(t, passed, rule.limit, "%s: at least the limit passes first", rule.path)
		assert.NotEmpty(t, blocked.Header.Get("Retry-After"))
		assert.True(t, strings.Contains(blocked.Header.Get("RateLimit-Policy"), ";q="+string(rune('0'+rule.limit))), blocked.Header.Get("RateLimit-Policy"))
	}
	assert.Equal(t, http.StatusOK, get("/items/1", "bob").StatusCode, "another user has their own limit")
}

// buildArgs are the go build arguments for the program: with -race when
// this test binary has it, so that the build reuses what the tests
// compiled (as core/cmd/sluicecheck's test does; another module).
func buildArgs(bin string) []string {
	args := []string{"build", "-o", bin}
	if bi, ok := debug.ReadBuildInfo(); ok && slices.Contains(bi.Settings, debug.BuildSetting{Key: "-race", Value: "true"}) {
		args = append(args, "-race")
	}
	return append(args, ".")
}
