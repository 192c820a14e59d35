// Command rlsbench measures rate limit services side by side on one machine
// and one Redis: envoyproxy/ratelimit (built from its module) and sluice-rls
// in Redis exact mode, Redis approximate mode and memory, and grpc-floor:
// rlsbench itself answering every call at once on grpc-go, what a call
// costs grpc-go. Each runs as its own process, all at once; concurrent clients call ShouldRateLimit over
// loopback, one server at a time, in rounds that alternate between the
// servers (so that a change in the machine's other load falls on each
// alike), and rlsbench prints calls/s, latency percentiles, the CPU time
// the server and Redis spent per 10,000 calls, read from /proc, the
// server's calls per CPU second against the reference's, and the Redis
// commands and reads (round trips) per call.
//
// Run it from its module's directory (adapters/envoy/internal/oracle):
//
//	go run ./rlsbench -d 10s -c 16
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
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

type flags struct {
	dur                   time.Duration
	conc, conns, keys     int
	rounds                int
	rlsDir, baseDir, only string
	profDir, refStats     string
}

func main() {
	var f flags
	flag.DurationVar(&f.dur, "d", 10*time.Second, "measured time per server, split over the rounds")
	flag.IntVar(&f.conc, "c", 32, "concurrent callers")
	flag.IntVar(&f.conns, "conns", 4, "gRPC connections to each server (callers share them)")
	flag.IntVar(&f.keys, "keys", 1000, "distinct remote addresses")
	flag.IntVar(&f.rounds, "rounds", 10, "rounds: each measures every server for d/rounds, in turn")
	flag.StringVar(&f.rlsDir, "sluice-rls", "../../cmd/sluice-rls", "directory of the sluice-rls command")
	flag.StringVar(&f.baseDir, "baseline", "", "directory of another sluice-rls command (another checkout's) to measure beside it, as base-exact, base-approximate and base-memory")
	flag.StringVar(&f.only, "only", "", "comma-separated servers to run (reference, exact, approximate, memory, grpc-floor, base-...); empty: all")
	flag.StringVar(&f.profDir, "cpuprofile", "", "directory to write the CPU profile of each server but grpc-floor and the baseline's to (SERVER.pprof), over the measure; empty: none")
	floor := flag.String("grpc-floor", "", "internal: serve a constant answer at this address (the grpc-floor server) and nothing else")
	flag.StringVar(&f.refStats, "ref-stats", "prometheus", "statistics of the reference: off (DISABLE_STATS), prometheus (USE_PROMETHEUS) or log (its default without statsd: a log line per call)")
	flag.Parse()
	if *floor != "" {
		if err := serveFloor(*floor); err != nil {
			fmt.Fprintln(os.Stderr, "rlsbench:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(f); err != nil {
		fmt.Fprintln(os.Stderr, "rlsbench:", err)
		os.Exit(1)
	}
}

// serveFloor serves, at addr, the rate limit service answering every call
// OK at once, with the gRPC server options and garbage collector target of
// sluice-rls: what a call costs grpc-go, whatever the server decides.
func serveFloor(addr string) error {
	debug.SetGCPercent(400)
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	gs := grpc.NewServer(grpc.NumStreamWorkers(uint32(32 * runtime.GOMAXPROCS(0))))
	rlsv3.RegisterRateLimitServiceServer(gs, floor{})
	return gs.Serve(lis)
}

// floor is the rate limit service of serveFloor.
type floor struct {
	rlsv3.UnimplementedRateLimitServiceServer
}

func (floor) ShouldRateLimit(_ context.Context, req *rlsv3.RateLimitRequest) (*rlsv3.RateLimitResponse, error) {
	resp := &rlsv3.RateLimitResponse{OverallCode: rlsv3.RateLimitResponse_OK}
	for range req.Descriptors {
		resp.Statuses = append(resp.Statuses, &rlsv3.RateLimitResponse_DescriptorStatus{Code: rlsv3.RateLimitResponse_OK})
	}
	return resp, nil
}

// floorServer starts rlsbench's grpc-floor server (serveFloor) in a
// process of its own (which serves no profiles).
func floorServer() (*oracle.Process, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	port, err := oracle.FreePort()
	if err != nil {
		return nil, err
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	cmd := exec.Command(self, "-grpc-floor", addr)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return waitAnswer(&oracle.Process{Cmd: cmd, Addr: addr}, "the grpc-floor server")
}

// server is a server under test and what was measured of it.
type server struct {
	name  string
	start func() (*oracle.Process, error)
	p     *oracle.Process
	conns []*grpc.ClientConn
	// measured, summed over the rounds
	calls               int
	elapsed             time.Duration
	lat                 []time.Duration
	serverCPU, redisCPU float64
	commands, reads     int64 // Redis's
}

func run(f flags) error {
	if f.rounds < 1 || f.dur/time.Duration(f.rounds) < 100*time.Millisecond {
		return fmt.Errorf("-rounds must be at least 1 and leave each round 100ms of -d, got %d rounds of %s", f.rounds, f.dur)
	}
	var refEnv []string
	switch f.refStats {
	case "off":
		refEnv = []string{"DISABLE_STATS=true"}
	case "prometheus":
		port, err := oracle.FreePort()
		if err != nil {
			return err
		}
		refEnv = []string{"USE_PROMETHEUS=true", "PROMETHEUS_ADDR=127.0.0.1:" + strconv.Itoa(port)}
	case "log":
	default:
		return fmt.Errorf("-ref-stats must be off, prometheus or log, got %q", f.refStats)
	}
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
	prof := f.profDir != ""
	servers := []*server{{name: "reference", start: func() (*oracle.Process, error) {
		bin, err := oracle.Build(tmp)
		if err != nil {
			return nil, err
		}
		return oracle.Reference(bin, filepath.Join(tmp, "ref"), rdb.Addr, map[string]string{"bench.yaml": config}, refEnv...)
	}}}
	builds := [][2]string{{"", f.rlsDir}}
	if f.baseDir != "" {
		builds = append(builds, [2]string{"base-", f.baseDir})
	}
	for _, b := range builds {
		bin := filepath.Join(tmp, b[0]+"sluice-rls")
		prof := prof && b[0] == "" // a baseline may not have -pprof
		servers = append(servers,
			&server{name: b[0] + "exact", start: func() (*oracle.Process, error) {
				return sluice(bin, cfgDir, prof, "-redis", rdb.Addr, "-mode", "exact")
			}},
			&server{name: b[0] + "approximate", start: func() (*oracle.Process, error) {
				return sluice(bin, cfgDir, prof, "-redis", rdb.Addr, "-mode", "approximate")
			}},
			&server{name: b[0] + "memory", start: func() (*oracle.Process, error) { return sluice(bin, cfgDir, prof) }})
		build := exec.Command("go", "build", "-o", bin, ".")
		build.Dir = b[1]
		if out, err := build.CombinedOutput(); err != nil {
			return fmt.Errorf("building sluice-rls in %s: %v\n%s", b[1], err, out)
		}
	}
	servers = append(servers, &server{name: "grpc-floor", start: func() (*oracle.Process, error) { return floorServer() }})
	if f.only != "" {
		servers = slices.DeleteFunc(servers, func(s *server) bool { return !slices.Contains(strings.Split(f.only, ","), s.name) })
	}
	defer func() {
		for _, s := range servers {
			for _, c := range s.conns {
				_ = c.Close()
			}
			if s.p != nil {
				s.p.Stop()
			}
		}
	}()
	addrs := make([]*rlsv3.RateLimitRequest, f.keys)
	for i := range addrs {
		addrs[i] = request(fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255))
	}
	for _, s := range servers {
		if s.p, err = s.start(); err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
		for range f.conns {
			c, err := grpc.NewClient(s.p.Addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
			if err != nil {
				return err
			}
			s.conns = append(s.conns, c)
		}
		if _, err := phase(s.conns, addrs, f.conc, time.Second); err != nil { // warm-up
			return fmt.Errorf("%s: %w", s.name, err)
		}
	}
	profErr := make(chan error, len(servers))
	profiled := 0
	if prof {
		// Each profile spans the whole measure (a quarter more for the
		// unmeasured calls of each round): a server idles while the
		// others are called.
		d := time.Duration(len(servers))*f.dur*5/4 + time.Duration(f.rounds*len(servers))*100*time.Millisecond
		for _, s := range servers {
			if s.p.DebugAddr != "" {
				profiled++
				go func() { profErr <- profile(s.p.DebugAddr, d, filepath.Join(f.profDir, s.name+".pprof")) }()
			}
		}
	}
	for range f.rounds {
		for _, s := range servers {
			if err := s.measure(addrs, f.conc, f.dur/time.Duration(f.rounds), rdb); err != nil {
				return fmt.Errorf("%s: %w", s.name, err)
			}
		}
	}
	if prof {
		for range profiled {
			if err := <-profErr; err != nil {
				return err
			}
		}
	}
	fmt.Printf("%d callers on %d connections, %d addresses, %s per server in %d rounds, GOMAXPROCS of the servers: default, statistics of the reference: %s\n",
		f.conc, f.conns, f.keys, f.dur, f.rounds, f.refStats)
	fmt.Printf("%-16s %9s %8s %8s %8s %9s %9s %10s %7s %7s %7s\n",
		"server", "calls", "calls/s", "p50", "p99", "CPU s/10k", "Redis/10k", "calls/CPUs", "x ref", "cmd/c", "rt/c")
	var ref float64
	for _, s := range servers {
		slices.Sort(s.lat)
		pct := func(p float64) time.Duration { return s.lat[int(float64(len(s.lat)-1)*p)].Round(time.Microsecond) }
		per10k := func(cpu float64) float64 { return cpu / float64(s.calls) * 10000 }
		perCPU := float64(s.calls) / s.serverCPU
		if s.name == "reference" {
			ref = perCPU
		}
		x := "-"
		if ref > 0 {
			x = fmt.Sprintf("%.2f", perCPU/ref)
		}
		fmt.Printf("%-16s %9d %8.0f %8s %8s %9.3f %9.3f %10.0f %7s %7.2f %7.2f\n", s.name, s.calls, float64(s.calls)/s.elapsed.Seconds(),
			pct(0.5), pct(0.99), per10k(s.serverCPU), per10k(s.redisCPU), perCPU, x,
			float64(s.commands)/float64(s.calls), float64(s.reads)/float64(s.calls))
	}
	return nil
}

// measure calls s for d and adds what it measured to s's sums, after
// calling it unmeasured for a quarter of d: a server that keeps state per
// address and exchanges it with Redis (approximate mode) reads again what it
// forgot while the others were measured, as a server in steady use would
// not.
func (s *server) measure(addrs []*rlsv3.RateLimitRequest, conc int, d time.Duration, rdb *oracle.Process) error {
	if _, err := phase(s.conns, addrs, conc, d/4); err != nil {
		return err
	}
	st0, err := redisStats(rdb.Addr)
	if err != nil {
		return err
	}
	s0, r0 := cpu(s.p.Cmd.Process.Pid), cpu(rdb.Cmd.Process.Pid)
	t0 := time.Now()
	lat, err := phase(s.conns, addrs, conc, d)
	elapsed := time.Since(t0)
	s1, r1 := cpu(s.p.Cmd.Process.Pid), cpu(rdb.Cmd.Process.Pid)
	if err != nil {
		return err
	}
	st1, err := redisStats(rdb.Addr)
	if err != nil {
		return err
	}
	s.calls += len(lat)
	s.lat = append(s.lat, lat...)
	s.elapsed += elapsed
	s.serverCPU += s1 - s0
	s.redisCPU += r1 - r0
	s.commands += st1["total_commands_processed"] - st0["total_commands_processed"]
	s.reads += st1["total_reads_processed"] - st0["total_reads_processed"]
	return nil
}

// phase calls on conns for d with conc callers, each asking for a random
// one of addrs after the answer to its last call, and returns the
// latencies of the calls.
func phase(conns []*grpc.ClientConn, addrs []*rlsv3.RateLimitRequest, conc int, d time.Duration) ([]time.Duration, error) {
	var (
		mu      sync.Mutex
		lat     []time.Duration
		callErr error
	)
	stop := time.Now().Add(d)
	var wg sync.WaitGroup
	for i := range conc {
		wg.Go(func() {
			c := rlsv3.NewRateLimitServiceClient(conns[i%len(conns)])
			rng := rand.New(rand.NewPCG(uint64(i), uint64(time.Now().UnixNano())))
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
			mu.Lock()
			lat = append(lat, mine...)
			mu.Unlock()
		})
	}
	wg.Wait()
	return lat, callErr
}

// sluice starts sluice-rls with the config directory dir and args, serving
// its profiles when prof is true.
func sluice(bin, dir string, prof bool, args ...string) (*oracle.Process, error) {
	var ports [2]int
	for i := range ports {
		port, err := oracle.FreePort()
		if err != nil {
			return nil, err
		}
		ports[i] = port
	}
	addr, debug := "127.0.0.1:"+strconv.Itoa(ports[0]), ""
	if prof {
		debug = "127.0.0.1:" + strconv.Itoa(ports[1])
		args = append(args, "-pprof")
	}
	args = append([]string{"-config", dir, "-listen", addr, "-http", debug}, args...)
	cmd := exec.Command(bin, args...)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return waitAnswer(&oracle.Process{Cmd: cmd, Addr: addr, DebugAddr: debug}, "sluice-rls")
}

// waitAnswer returns p once it answers a call; it stops p and returns an
// error naming it when p does not answer within 10s.
func waitAnswer(p *oracle.Process, name string) (*oracle.Process, error) {
	for range 500 { // until it answers; a bound against a hang
		if _, err := call(p.Addr); err == nil {
			return p, nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	p.Stop()
	return nil, errors.New(name + " did not answer")
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

// profile writes the CPU profile of the next d of the process serving
// /debug/pprof/ at addr to file.
func profile(addr string, d time.Duration, file string) error {
	if addr == "" {
		return errors.New("the server serves no profiles")
	}
	resp, err := http.Get("http://" + addr + "/debug/pprof/profile?seconds=" + strconv.Itoa(int(d.Round(time.Second)/time.Second)))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("profile of %s: %s", addr, resp.Status)
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	return os.WriteFile(file, b, 0o644)
}

// redisStats returns the counters of the Redis at addr's INFO stats (the
// warm-up's calls included: a rate per call is a slight overestimate).
func redisStats(addr string) (map[string]int64, error) {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(c, "INFO stats\r\n"); err != nil {
		return nil, err
	}
	r := bufio.NewReader(c)
	head, err := r.ReadString('\n')
	if err != nil {
		return nil, err
	}
	n, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(head, "$")))
	if err != nil || !strings.HasPrefix(head, "$") {
		return nil, fmt.Errorf("INFO stats: unexpected reply %q", head)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		return nil, err
	}
	st := map[string]int64{}
	for _, line := range strings.Split(string(body), "\r\n") {
		if k, v, ok := strings.Cut(line, ":"); ok {
			if x, err := strconv.ParseInt(v, 10, 64); err == nil {
				st[k] = x
			}
		}
	}
	return st, nil
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
