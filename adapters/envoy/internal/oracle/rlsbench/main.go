// Command rlsbench measures rate limit services side by side on one machine
// and one Redis: envoyproxy/ratelimit (built from its module) and sluice-rls
// in Redis exact mode, Redis approximate mode and memory. Each runs as its
// own process; concurrent clients call ShouldRateLimit over loopback for a
// while, and rlsbench prints calls/s, latency percentiles and the CPU time
// the server (and Redis) spent per 10,000 calls, read from /proc.
//
// Run it from its module's directory (adapters/envoy/internal/oracle):
//
//	go run ./rlsbench -d 10s -c 32
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	ratelimitv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/common/ratelimit/v3"
	rlsv3 "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/sluicekit/sluice/adapters/envoy/internal/oracle"
)

const config = `domain: bench
descriptors:
  - key: remote_address
    rate_limit: {unit: second, requests_per_unit: 1000000}
  - key: generic_key
    value: api
    rate_limit: {unit: second, requests_per_unit: 1000000}
`

func main() {
	dur := flag.Duration("d", 10*time.Second, "measured time per server")
	conc := flag.Int("c", 32, "concurrent callers")
	conns := flag.Int("conns", 4, "gRPC connections (callers share them)")
	keys := flag.Int("keys", 1000, "distinct remote addresses")
	rlsDir := flag.String("sluice-rls", "../../cmd/sluice-rls", "directory of the sluice-rls command")
	only := flag.String("only", "", "comma-separated servers to run (reference, exact, approximate, memory); empty: all")
	flag.Parse()
	if err := run(*dur, *conc, *conns, *keys, *rlsDir, *only); err != nil {
		fmt.Fprintln(os.Stderr, "rlsbench:", err)
		os.Exit(1)
	}
}

func run(dur time.Duration, conc, conns, keys int, rlsDir, only string) error {
	tmp, err := os.MkdirTemp("", "rlsbench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	rdb, err := oracle.Redis()
	if err != nil {
		return err
	}
	defer rdb.Stop()
	cfgDir := filepath.Join(tmp, "sluice")
	if err := os.MkdirAll(cfgDir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(cfgDir, "bench.yaml"), []byte(config), 0o600); err != nil {
		return err
	}
	sluiceBin := filepath.Join(tmp, "sluice-rls")
	build := exec.Command("go", "build", "-o", sluiceBin, ".")
	build.Dir = rlsDir
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("building sluice-rls: %v\n%s", err, out)
	}
	servers := []struct {
		name  string
		start func() (*oracle.Process, error)
	}{
		{"reference", func() (*oracle.Process, error) {
			bin, err := oracle.Build(tmp)
			if err != nil {
				return nil, err
			}
			return oracle.Reference(bin, filepath.Join(tmp, "ref"), rdb.Addr, map[string]string{"bench.yaml": config})
		}},
		{"exact", func() (*oracle.Process, error) {
			return sluice(sluiceBin, cfgDir, "-redis", rdb.Addr, "-mode", "exact")
		}},
		{"approximate", func() (*oracle.Process, error) {
			return sluice(sluiceBin, cfgDir, "-redis", rdb.Addr, "-mode", "approximate")
		}},
		{"memory", func() (*oracle.Process, error) { return sluice(sluiceBin, cfgDir) }},
	}
	fmt.Printf("%d callers on %d connections, %d addresses, %s per server, GOMAXPROCS of the servers: default\n", conc, conns, keys, dur)
	fmt.Printf("%-12s %10s %9s %9s %9s %14s %14s %14s\n", "server", "calls", "calls/s", "p50", "p99", "srv CPU s/10k", "redis s/10k", "calls/srv CPUs")
	for _, s := range servers {
		if only != "" && !slices.Contains(strings.Split(only, ","), s.name) {
			continue
		}
		p, err := s.start()
		if err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
		r, err := load(p.Addr, dur, conc, conns, keys, p.Cmd.Process.Pid, rdb.Cmd.Process.Pid)
		p.Stop()
		if err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
		per10k := func(cpu float64) float64 { return cpu / float64(r.calls) * 10000 }
		fmt.Printf("%-12s %10d %9.0f %9s %9s %14.3f %14.3f %14.0f\n", s.name, r.calls, float64(r.calls)/r.elapsed.Seconds(),
			r.p50.Round(time.Microsecond), r.p99.Round(time.Microsecond), per10k(r.serverCPU), per10k(r.redisCPU), float64(r.calls)/r.serverCPU)
	}
	return nil
}

// sluice starts sluice-rls with the config directory dir and args.
func sluice(bin, dir string, args ...string) (*oracle.Process, error) {
	port, err := oracle.FreePort()
	if err != nil {
		return nil, err
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	cmd := exec.Command(bin, append([]string{"-config", dir, "-listen", addr, "-http", ""}, args...)...)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &oracle.Process{Cmd: cmd, Addr: addr}
	for range 500 { // until it answers; a bound against a hang
		if _, err := call(addr); err == nil {
			return p, nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	p.Stop()
	return nil, errors.New("sluice-rls did not answer")
}

func call(addr string) (*rlsv3.RateLimitResponse, error) {
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	return rlsv3.NewRateLimitServiceClient(conn).ShouldRateLimit(ctx, request("probe"))
}

func request(addr string) *rlsv3.RateLimitRequest {
	return &rlsv3.RateLimitRequest{Domain: "bench", Descriptors: []*ratelimitv3.RateLimitDescriptor{
		{Entries: []*ratelimitv3.RateLimitDescriptor_Entry{{Key: "remote_address", Value: addr}}},
	}}
}

type result struct {
	calls               int
	elapsed             time.Duration
	p50, p99            time.Duration
	serverCPU, redisCPU float64
}

// load calls the server at addr for dur with conc callers, after a warm-up
// of a second, and measures the CPU time of the processes srv and redis.
func load(addr string, dur time.Duration, conc, nconns, keys, srv, redis int) (result, error) {
	conns := make([]*grpc.ClientConn, nconns)
	for i := range conns {
		c, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			return result{}, err
		}
		defer c.Close()
		conns[i] = c
	}
	addrs := make([]*rlsv3.RateLimitRequest, keys)
	for i := range addrs {
		addrs[i] = request(fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255))
	}
	var (
		mu      sync.Mutex
		lat     []time.Duration
		callErr error
	)
	phase := func(d time.Duration, record bool) {
		stop := time.Now().Add(d)
		var wg sync.WaitGroup
		for i := range conc {
			wg.Go(func() {
				c := rlsv3.NewRateLimitServiceClient(conns[i%len(conns)])
				rng := rand.New(rand.NewPCG(uint64(i), 1))
				var mine []time.Duration
				for time.Now().Before(stop) {
					t0 := time.Now()
					_, err := c.ShouldRateLimit(context.Background(), addrs[rng.IntN(len(addrs))])
					if err != nil {
						mu.Lock()
						callErr = err
						mu.Unlock()
						return
					}
					mine = append(mine, time.Since(t0))
				}
				if record {
					mu.Lock()
					lat = append(lat, mine...)
					mu.Unlock()
				}
			})
		}
		wg.Wait()
	}
	phase(time.Second, false)
	s0, r0 := cpu(srv), cpu(redis)
	t0 := time.Now()
	phase(dur, true)
	elapsed := time.Since(t0)
	s1, r1 := cpu(srv), cpu(redis)
	if callErr != nil {
		return result{}, callErr
	}
	slices.Sort(lat)
	pct := func(p float64) time.Duration { return lat[int(float64(len(lat)-1)*p)] }
	return result{calls: len(lat), elapsed: elapsed, p50: pct(0.5), p99: pct(0.99), serverCPU: s1 - s0, redisCPU: r1 - r0}, nil
}

// cpu returns the user and system CPU seconds of process pid, from
// /proc/pid/stat (in clock ticks of 1/100 s, as on Linux).
func cpu(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	u, _ := strconv.ParseFloat(f[11], 64)
	k, _ := strconv.ParseFloat(f[12], 64)
	return (u + k) / 100
}
