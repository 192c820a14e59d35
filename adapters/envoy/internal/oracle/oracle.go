// Package oracle runs the reference rate limit service, envoyproxy/ratelimit,
// built from its module, beside sluice's, for the tests that compare them
// (oracle_test.go) and the benchmark that measures them (command rlsbench).
// It is a module of its own so that the reference's dependencies never reach
// sluice's modules.
package oracle

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	ratelimitv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// Build builds the reference server's command into dir and returns its
// path. It takes a minute the first time; the build cache makes later builds
// quick.
func Build(dir string) (string, error) {
	bin := filepath.Join(dir, "ratelimit")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/envoyproxy/ratelimit/src/service_cmd")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building envoyproxy/ratelimit: %v\n%s", err, out)
	}
	return bin, nil
}

// FreePort returns a TCP port of the loopback interface free now.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Process is a process the oracle started.
type Process struct {
	Cmd  *exec.Cmd
	Addr string // its address on the loopback interface
	// DebugAddr is the HTTP address that serves its Go profiles at
	// /debug/pprof/, "" for none.
	DebugAddr string
}

// Stop kills p and waits for it.
func (p *Process) Stop() {
	_ = p.Cmd.Process.Kill()
	_ = p.Cmd.Wait()
}

// Redis starts redis-server (from PATH) on a free port, without persistence.
func Redis() (*Process, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, err
	}
	port, err := FreePort()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no")
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &Process{Cmd: cmd, Addr: "127.0.0.1:" + strconv.Itoa(port)}
	for range 1000 { // until it listens; a bound against a hang, not on time
		if c, err := net.Dial("tcp", p.Addr); err == nil {
			c.Close()
			return p, nil
		}
		time.Sleep(10 * time.Millisecond)
	}
	p.Stop()
	return nil, errors.New("redis-server did not start")
}

// Reference starts the reference server bin on a free port with the config
// files configs (name: content), counting in the Redis at redisAddr.
func Reference(bin, runtimeDir, redisAddr string, configs map[string]string, env ...string) (*Process, error) {
	cfgDir := filepath.Join(runtimeDir, "ratelimit", "config")
	if err := os.MkdirAll(cfgDir, 0o755); err != nil {
		return nil, err
	}
	for name, c := range configs {
		if err := os.WriteFile(filepath.Join(cfgDir, name), []byte(c), 0o600); err != nil {
			return nil, err
		}
	}
	var ports [3]int
	for i := range ports {
		p, err := FreePort()
		if err != nil {
			return nil, err
		}
		ports[i] = p
	}
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(),
		"USE_STATSD=false", "LOG_LEVEL=error", "BACKEND_TYPE=redis",
		"REDIS_SOCKET_TYPE=tcp", "REDIS_URL="+redisAddr,
		"RUNTIME_ROOT="+runtimeDir, "RUNTIME_SUBDIRECTORY=ratelimit", "RUNTIME_WATCH_ROOT=false", "RUNTIME_IGNOREDOTFILES=true",
		"HOST=127.0.0.1", "GRPC_HOST=127.0.0.1", "DEBUG_HOST=127.0.0.1",
		"GRPC_PORT="+strconv.Itoa(ports[0]), "PORT="+strconv.Itoa(ports[1]), "DEBUG_PORT="+strconv.Itoa(ports[2]))
	cmd.Env = append(cmd.Env, env...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &Process{Cmd: cmd, Addr: "127.0.0.1:" + strconv.Itoa(ports[0]), DebugAddr: "127.0.0.1:" + strconv.Itoa(ports[2])}
	conn, err := grpc.NewClient(p.Addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		p.Stop()
		return nil, err
	}
	defer conn.Close()
	c := rlsv3.NewRateLimitServiceClient(conn)
	probe := &rlsv3.RateLimitRequest{Domain: "oracle-probe", Descriptors: []*ratelimitv3.RateLimitDescriptor{
		{Entries: []*ratelimitv3.RateLimitDescriptor_Entry{{Key: "k", Value: "v"}}}}}
	for range 1000 { // until it answers; a bound against a hang, not on time
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, err = c.ShouldRateLimit(ctx, probe)
		cancel()
		if err == nil {
			return p, nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	p.Stop()
	return nil, fmt.Errorf("envoyproxy/ratelimit did not answer: %v", err)
}
