package main

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// programs are the README's programs, by the directory of each (relative
// to this one); all but grpc read rules.yaml.
var programs = []string{".", "gin", "echo", "grpc"}

// TestREADME checks that the README shows these programs and rules.yaml as
// they are, and no other Go or YAML code, so that every program a reader
// copies is one these tests build and run; that each program is at most
// 40 lines and the README at most 350; that the files it links to exist;
// and that the Go version it states is the highest go directive of the
// library modules.
func TestREADME(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	require.NoError(t, err)
	blocks := map[string][]string{}
	for _, m := range regexp.MustCompile("(?ms)^```(go|yaml)\n(.*?)^```\n").FindAllStringSubmatch(string(readme), -1) {
		blocks[m[1]] = append(blocks[m[1]], m[2])
	}
	var files []string
	for _, dir := range programs {
		files = append(files, filepath.Join(dir, "main.go"))
	}
	var want []string
	for _, file := range files {
		body, err := os.ReadFile(file)
		require.NoError(t, err)
		want = append(want, string(body))
		assert.LessOrEqual(t, strings.Count(string(body), "\n"), 40, "%s: a README program is at most 40 lines", file)
	}
	assert.Equal(t, want, blocks["go"], "README.md's Go blocks are %v, in that order, as they are", files)
	rules, err := os.ReadFile("rules.yaml")
	require.NoError(t, err)
	assert.Equal(t, []string{string(rules)}, blocks["yaml"], "README.md's one YAML block is rules.yaml as it is")
	assert.LessOrEqual(t, strings.Count(string(readme), "\n"), 350, "README.md is at most 350 lines")

	for _, link := range regexp.MustCompile(`\]\(([^)#:]+)\)`).FindAllStringSubmatch(string(readme), -1) {
		_, err := os.Stat(filepath.Join("..", "..", link[1]))
		assert.NoError(t, err, "README.md links to %s", link[1])
	}

	m := regexp.MustCompile(`needs \*\*Go (1\.\d+)\*\* or newer`).FindStringSubmatch(string(readme))
	require.NotNil(t, m, "README.md states the minimum Go version")
	assert.Equal(t, highestGo(t), m[1], "README.md's minimum Go version is the highest go directive of the library modules")
}

// highestGo is the highest go directive, as major.minor ("1.26"), of the
// library modules: those of .ci/modules but the examples and internal ones.
func highestGo(t *testing.T) string {
	root := filepath.Join("..", "..")
	list, err := os.ReadFile(filepath.Join(root, ".ci", "modules"))
	require.NoError(t, err)
	highest := -1
	for _, mod := range strings.Fields(regexp.MustCompile(`(?m)#.*$`).ReplaceAllString(string(list), "")) {
		if strings.HasPrefix(mod, "examples") || strings.Contains("/"+mod+"/", "/internal/") {
			continue
		}
		f, err := os.Open(filepath.Join(root, mod, "go.mod"))
		require.NoError(t, err)
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), "go "); ok {
				major, minor, _ := strings.Cut(v, ".")
				minor, _, _ = strings.Cut(minor, ".")
				n, err := strconv.Atoi(minor)
				require.NoError(t, err, "%s/go.mod: go %s", mod, v)
				require.Equal(t, "1", major, "%s/go.mod: go %s", mod, v)
				highest = max(highest, n)
			}
		}
		require.NoError(t, f.Close())
	}
	require.GreaterOrEqual(t, highest, 0)
	return "1." + strconv.Itoa(highest)
}

// TestHTTPPrograms builds the net/http, gin and echo programs, runs each
// with rules.yaml on a free loopback port, and checks its rules over HTTP.
func TestHTTPPrograms(t *testing.T) {
	for _, dir := range programs[:3] {
		t.Run(dir, func(t *testing.T) {
			t.Parallel()
			addr := start(t, dir)
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

			// The 5-per-second rule blocks within a second's worth of
			// requests, however slowly a busy host sends them (a request
			// takes far less than 200 ms). A blocked response says when to
			// retry.
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
				assert.Contains(t, blocked.Header.Get("RateLimit-Policy"), ";q="+string(rune('0'+rule.limit)))
			}
			assert.Equal(t, http.StatusOK, get("/items/1", "bob").StatusCode, "another user has their own limit")
			for range 10 {
				require.Equal(t, http.StatusOK, get("/items/1", "vip").StatusCode, "vip's override is 100")
			}
		})
	}
}

// TestGRPCProgram builds the gRPC program, runs it on a free loopback port
// and checks its per-user rule with a gRPC client.
func TestGRPCProgram(t *testing.T) {
	t.Parallel()
	addr := start(t, "grpc")
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	client := healthpb.NewHealthClient(conn)
	check := func(user string) error {
		ctx := metadata.AppendToOutgoingContext(context.Background(), "x-user-id", user)
		_, err := client.Check(ctx, &healthpb.HealthCheckRequest{})
		return err
	}

	passed := 0
	var blocked error
	for range 200 {
		if err := check("alice"); err != nil {
			blocked = err
			break
		}
		passed++
	}
	require.Error(t, blocked, "a call blocked within 200")
	st := status.Convert(blocked)
	require.Equal(t, codes.ResourceExhausted, st.Code(), "%v", blocked)
	assert.GreaterOrEqual(t, passed, 3, "at least the limit passes first")
	assert.True(t, slices.ContainsFunc(st.Details(), func(d any) bool {
		_, ok := d.(*errdetails.RetryInfo)
		return ok
	}), "a blocked call says when to retry: %v", st.Details())
	assert.NoError(t, check("bob"), "another user has their own limit")
}

// start builds the program in dir, runs it in this directory (where
// rules.yaml is) on a free loopback port until t ends, and returns the
// address once it listens.
func start(t *testing.T, dir string) string {
	bin := filepath.Join(t.TempDir(), "program")
	out, err := exec.Command("go", buildArgs(bin, "./"+dir)...).CombinedOutput()
	require.NoError(t, err, "%s", out)

	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), "ADDR="+addr, "GIN_MODE=release")
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	require.Eventually(t, func() bool {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
		}
		return err == nil
	}, 60*time.Second, 10*time.Millisecond, "%s listens", dir)
	return addr
}

// buildArgs are the go build arguments for the program pkg: with -race
// when this test binary has it, so that the build reuses what the tests
// compiled (as core/cmd/sluicecheck's test does; another module).
func buildArgs(bin, pkg string) []string {
	args := []string{"build", "-o", bin}
	if bi, ok := debug.ReadBuildInfo(); ok && slices.Contains(bi.Settings, debug.BuildSetting{Key: "-race", Value: "true"}) {
		args = append(args, "-race")
	}
	return append(args, pkg)
}
