package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	rpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"

	"github.com/sluicekit/sluice/examples/grpc/greeterpb"
)

// syncBuffer is the server's log, written by its goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// start runs the example with args on 127.0.0.1:0 and returns a connection
// to it, its log, and a function that stops it and returns run's error.
func start(t *testing.T, args ...string) (*grpc.ClientConn, *syncBuffer, func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out := &syncBuffer{}
	addrs := make(chan net.Addr, 1)
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, append([]string{"-addr", "127.0.0.1:0", "-http", "127.0.0.1:0"}, args...), out, func(a net.Addr) { addrs <- a })
	}()
	var addr net.Addr
	select {
	case addr = <-addrs:
	case err := <-done:
		cancel()
		t.Fatalf("run: %v\n%s", err, out)
	}
	conn, err := grpc.NewClient(addr.String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	var once sync.Once
	var runErr error
	stop := func() error {
		once.Do(func() {
			cancel()
			runErr = <-done
		})
		return runErr
	}
	t.Cleanup(func() {
		_ = conn.Close()
		_ = stop()
	})
	return conn, out, stop
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func as(ctx context.Context, user string) context.Context {
	return metadata.AppendToOutgoingContext(ctx, "x-user-id", user)
}

func TestServerBothMethodsAndLimits(t *testing.T) {
	conn, out, stop := start(t)
	client := greeterpb.NewGreeterClient(conn)
	ctx := testCtx(t)

	reply, err := client.SayHello(as(ctx, "alice"), &greeterpb.HelloRequest{Name: "alice"})
	require.NoError(t, err)
	assert.Equal(t, "Hello, alice", reply.GetMessage())

	// alice may make 2 calls per second with a burst of 1 (and everyone
	// together 5): a quick run of calls is blocked before its tenth.
	var blocked error
	for range 10 {
		if _, err := client.SayHello(as(ctx, "alice"), &greeterpb.HelloRequest{Name: "alice"}); err != nil {
			blocked = err
			break
		}
	}
	require.Error(t, blocked)
	st := status.Convert(blocked)
	require.Equal(t, codes.ResourceExhausted, st.Code(), "%v", blocked)
	var retry *errdetails.RetryInfo
	for _, d := range st.Details() {
		if r, ok := d.(*errdetails.RetryInfo); ok {
			retry = r
		}
	}
	require.NotNil(t, retry)
	assert.Positive(t, retry.GetRetryDelay().AsDuration())

	// Count streams its numbers.
	s, err := client.Count(as(ctx, "vip"), &greeterpb.CountRequest{N: 3, IntervalMs: 1})
	require.NoError(t, err)
	var got []int32
	for {
		r, err := s.Recv()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		got = append(got, r.GetNumber())
	}
	assert.Equal(t, []int32{1, 2, 3}, got)

	// At most 2 Count streams at once: two held open, the third blocked.
	held, cancelHeld := context.WithCancel(as(ctx, "vip"))
	defer cancelHeld()
	for range 2 {
		s, err := client.Count(held, &greeterpb.CountRequest{N: 2, IntervalMs: 10_000})
		require.NoError(t, err)
		_, err = s.Recv()
		require.NoError(t, err)
	}
	s, err = client.Count(as(ctx, "vip"), &greeterpb.CountRequest{N: 1})
	require.NoError(t, err)
	_, err = s.Recv()
	require.Equal(t, codes.ResourceExhausted, status.Code(err), "%v", err)

	// Reflection is on, and not limited.
	refl, err := rpb.NewServerReflectionClient(conn).ServerReflectionInfo(ctx)
	require.NoError(t, err)
	require.NoError(t, refl.Send(&rpb.ServerReflectionRequest{
		MessageRequest: &rpb.ServerReflectionRequest_ListServices{ListServices: "*"},
	}))
	resp, err := refl.Recv()
	require.NoError(t, err)
	var names []string
	for _, s := range resp.GetListServicesResponse().GetService() {
		names = append(names, s.GetName())
	}
	assert.Contains(t, names, "sluice.examples.Greeter")
	require.NoError(t, refl.CloseSend())

	// The operators' pages: metrics count the blocked calls, and the
	// dashboard's snapshot shows the rules.
	m := regexp.MustCompile(`dashboard on http://(\S+)/debug/sluice/`).FindStringSubmatch(out.String())
	require.NotNil(t, m, "no dashboard address in the log:\n%s", out.String())
	metrics := httpGet(t, "http://"+m[1]+"/metrics")
	assert.Regexp(t, `sluice_requests_total\{sluice_resource="/sluice.examples.Greeter/SayHello",sluice_result="hotspot"\} [1-9]`, metrics)
	assert.Contains(t, httpGet(t, "http://"+m[1]+"/debug/sluice/api/snapshot"), `"resource":"/sluice.examples.Greeter/Count"`)

	// Graceful shutdown once no call is in flight.
	cancelHeld()
	require.NoError(t, stop())
	assert.Contains(t, out.String(), "3 rules loaded; serving sluice.examples.Greeter on 127.0.0.1:")
	assert.Contains(t, out.String(), "shutting down")
}

// httpGet returns the body of a GET of url, which must answer 200.
func httpGet(t *testing.T, url string) string {
	t.Helper()
	res, err := http.Get(url)
	require.NoError(t, err)
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, res.StatusCode, "%s", body)
	return string(body)
}

func TestGraceBoundsShutdown(t *testing.T) {
	conn, _, stop := start(t, "-grace", "50ms")
	client := greeterpb.NewGreeterClient(conn)
	ctx := testCtx(t)
	s, err := client.Count(as(ctx, "vip"), &greeterpb.CountRequest{N: 2, IntervalMs: 10_000})
	require.NoError(t, err)
	_, err = s.Recv()
	require.NoError(t, err)

	// The stream would last 10s more; shutdown stops it after the grace.
	require.NoError(t, stop())
	_, err = s.Recv()
	require.Error(t, err)
	assert.NotEqual(t, io.EOF, err)
}

func TestRulesFlag(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "rules.yaml")
	require.NoError(t, os.WriteFile(file, []byte(`rules:
  - name: closed
    resource: "/sluice.examples.Greeter/*"
    kind: flow
    limit: 0
`), 0o600))
	conn, out, _ := start(t, "-rules", file)
	_, err := greeterpb.NewGreeterClient(conn).SayHello(testCtx(t), &greeterpb.HelloRequest{})
	require.Equal(t, codes.ResourceExhausted, status.Code(err))
	assert.Contains(t, status.Convert(err).Message(), `"closed"`)
	assert.Contains(t, out.String(), "1 rules loaded")

	bad := filepath.Join(dir, "bad.yaml")
	require.NoError(t, os.WriteFile(bad, []byte("rules:\n  - resource: x\n    kind: flow\n    limit: -5\n"), 0o600))
	err = run(context.Background(), []string{"-addr", "127.0.0.1:0", "-rules", bad}, io.Discard, nil)
	require.ErrorContains(t, err, "limit")
	err = run(context.Background(), []string{"-nope"}, io.Discard, nil)
	require.Error(t, err)
	err = run(context.Background(), []string{"-reload", "soon"}, io.Discard, nil)
	require.Error(t, err)
}

func TestRulesReload(t *testing.T) {
	file := filepath.Join(t.TempDir(), "rules.yaml")
	rules := func(limit int) []byte {
		return fmt.Appendf(nil, "rules:\n  - name: greeter-rate\n    resource: \"/sluice.examples.Greeter/*\"\n    kind: flow\n    limit: %d\n    window: 1m\n", limit)
	}
	require.NoError(t, os.WriteFile(file, rules(0), 0o600))
	conn, out, _ := start(t, "-rules", file, "-reload", "10ms")
	client := greeterpb.NewGreeterClient(conn)
	ctx := testCtx(t)
	_, err := client.SayHello(ctx, &greeterpb.HelloRequest{})
	require.Equal(t, codes.ResourceExhausted, status.Code(err), "limit 0")

	// The limit goes to 2 per minute: calls pass, two of them.
	require.NoError(t, os.WriteFile(file, rules(2), 0o600))
	require.Eventually(t, func() bool {
		_, err := client.SayHello(ctx, &greeterpb.HelloRequest{})
		require.True(t, err == nil || status.Code(err) == codes.ResourceExhausted, "%v", err)
		return err == nil
	}, 10*time.Second, 5*time.Millisecond, "the new limit never applied\n%s", out)
	_, err = client.SayHello(ctx, &greeterpb.HelloRequest{})
	require.NoError(t, err)
	_, err = client.SayHello(ctx, &greeterpb.HelloRequest{})
	require.Equal(t, codes.ResourceExhausted, status.Code(err), "limit 2")
	// The new rules apply before the watcher logs them: wait for the line.
	reloaded := `msg="sluice: rules reloaded" path=` + file + ` rules=1 changed=[greeter-rate]`
	assert.Eventually(t, func() bool { return strings.Contains(out.String(), reloaded) }, 10*time.Second, 5*time.Millisecond, "%s", out)

	// A broken version is logged and ignored. (The watcher may first read
	// the file cut short by the write, and reject it as empty.)
	require.NoError(t, os.WriteFile(file, rules(-1), 0o600))
	rejected := `rules file rejected; the rules in force are kept" path=` + file + ` err="rules[0] (greeter-rate): line 5: limit must be >= 0, got -1"`
	require.Eventually(t, func() bool { return strings.Contains(out.String(), rejected) }, 10*time.Second, 5*time.Millisecond, "%s", out)
	_, err = client.SayHello(ctx, &greeterpb.HelloRequest{})
	require.Equal(t, codes.ResourceExhausted, status.Code(err))
	assert.Contains(t, status.Convert(err).Message(), "limit 2 per 1m0s")
}
