// Command table runs the Redis store's benchmarks (this module's, and the
// approximate decisions of core/store/redisstore) against a redis-server it
// starts on a free loopback port, and writes their table, with the machine
// it ran on, into README.md (between its table markers) and to standard
// output:
//
//	go -C core/store/redisstore/internal/peerbench run ./cmd/table
//
// Each round runs every benchmark as a process of its own, in reverse order
// in odd rounds. Times are medians over the rounds; a ratio is the median
// of the rounds' ratios, each measured in one process in turns (see
// BenchmarkRedisVsPing and BenchmarkRedisParallelVsPeer), with their range.
package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/sluicekit/sluice/core/internal/peerbench/benchtable"
	"github.com/sluicekit/sluice/core/store"
)

// bench is one benchmark function of a test binary.
type bench struct{ bin, name string }

var benches = []bench{
	{"peer", "BenchmarkRedis"},
	{"peer", "BenchmarkRedisVsPing"},
	{"peer", "BenchmarkRedisParallelVsPeer"},
	{"store", "BenchmarkRedisApprox"},
}

func main() {
	f := benchtable.ParseFlags()
	log.SetFlags(0)
	if err := run(f.Rounds, f.Benchtime, f.Readme); err != nil {
		log.Fatal(err)
	}
}

func run(rounds int, benchtime, readme string) error {
	dir, err := os.MkdirTemp("", "redistable")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	bins := map[string]string{}
	for name, pkg := range map[string]string{"peer": ".", "store": "../.."} {
		if bins[name], err = benchtable.Build(dir, name, pkg); err != nil {
			return err
		}
	}
	addr, stop, err := startRedis(dir)
	if err != nil {
		return err
	}
	defer stop()
	env := []string{"SLUICE_REDIS_ADDR=" + addr, "SLUICE_REQUIRE_REDIS=1"}

	load := benchtable.LoadAvg()
	started := time.Now()
	all := map[string][]benchtable.Result{}
	for r := range rounds {
		order := slices.Clone(benches)
		if r%2 == 1 {
			slices.Reverse(order)
		}
		for _, b := range order {
			res, err := benchtable.Run(bins[b.bin], b.name, benchtime, env...)
			if err != nil {
				return err
			}
			all[b.name] = append(all[b.name], res)
		}
		log.Printf("round %d of %d done", r+1, rounds)
	}

	t := table(all, started, rounds, benchtime, load)
	fmt.Print(t)
	if readme != "" {
		return benchtable.ReplaceTable(readme, t)
	}
	return nil
}

// table prints the figures of all, by benchmark name.
func table(all map[string][]benchtable.Result, started time.Time, rounds int, benchtime, load string) string {
	var t strings.Builder
	t.WriteString(benchtable.Measured(started, rounds, benchtime, load) + "\n")
	t.WriteString("| decision | serial | 16 goroutines | serial, × a PING in turns | 16 goroutines, throughput × redis_rate's in turns |\n")
	t.WriteString("| --- | --- | --- | --- | --- |\n")
	exact := all["BenchmarkRedis"]
	µs := func(sub string) string {
		return benchtable.Format(benchtable.Median(benchtable.Values(exact, sub, "ns/op"))/1000) + " µs"
	}
	for _, d := range []struct{ sub, what, vsPing, vsPeer string }{
		{"ping", "PING round trip (the floor)", "1", ""},
		{"sluice-token-bucket", "sluice exact, token bucket", ratio(all["BenchmarkRedisVsPing"], "", "sluice-token-bucket/ping"),
			ratio(all["BenchmarkRedisParallelVsPeer"], "sluice-token-bucket", "throughput/redis_rate")},
		{"sluice-sliding-counter", "sluice exact, sliding counter", ratio(all["BenchmarkRedisVsPing"], "", "sluice-sliding-counter/ping"),
			ratio(all["BenchmarkRedisParallelVsPeer"], "sluice-sliding-counter", "throughput/redis_rate")},
		{"redis_rate", "go-redis/redis_rate Allow (token bucket)", ratio(all["BenchmarkRedisVsPing"], "", "redis_rate/ping"), "1"},
	} {
		fmt.Fprintf(&t, "| %s | %s | %s | %s | %s |\n", d.what, µs(d.sub+"/serial"), µs(d.sub+"/parallel16"), d.vsPing, d.vsPeer)
	}
	approx := all["BenchmarkRedisApprox"]
	ns := func(sub string) string {
		return fmt.Sprintf("%s ns, %s allocs", benchtable.Format(benchtable.Median(benchtable.Values(approx, sub, "ns/op"))),
			benchtable.Format(benchtable.Median(benchtable.Values(approx, sub, "allocs/op"))))
	}
	for _, alg := range []store.Algorithm{store.SlidingCounter, store.TokenBucket, store.LeakyBucket} {
		fmt.Fprintf(&t, "| sluice approximate, %s | %s | %s | | |\n", alg, ns(string(alg)+"/serial"), ns(string(alg)+"/parallel16"))
	}
	return t.String()
}

// ratio prints the median and range over rs of unit of sub.
func ratio(rs []benchtable.Result, sub, unit string) string {
	return benchtable.Ratio(benchtable.Values(rs, sub, unit))
}

// startRedis starts a redis-server with no persistence on a free loopback
// port, in dir, and returns its address and the function that stops it.
func startRedis(dir string) (string, func(), error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	if err := l.Close(); err != nil {
		return "", nil, err
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	cmd := exec.Command("redis-server", "--bind", "127.0.0.1", "--port", strconv.Itoa(port),
		"--save", "", "--appendonly", "no", "--dir", dir)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return "", nil, fmt.Errorf("starting redis-server (the benchmarks need one on PATH): %w", err)
	}
	stop := func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		err := c.Ping(context.Background()).Err()
		if err == nil {
			return addr, stop, nil
		}
		if time.Now().After(deadline) {
			stop()
			return "", nil, errors.Join(fmt.Errorf("redis-server on %s did not answer in 10s", addr), err)
		}
	}
}
