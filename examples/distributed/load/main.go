// Command load drives several instances of examples/distributed together
// and prints, each second, the requests every instance admitted and their
// total against the global limit: the limit holds for all of them, however
// the requests spread.
//
//	go -C examples run ./distributed/load                   # 3 instances in this process, Redis at 127.0.0.1:6379
//	go -C examples run ./distributed/load -instances 4 -rate 200 -duration 10s
//	go -C examples run ./distributed/load -path /search     # the approximate limit
//	go -C examples run ./distributed/load -targets 127.0.0.1:8081,127.0.0.1:8082,127.0.0.1:8083
//
// Without -targets it starts -instances instances of the example's server
// on loopback ports, sharing the Redis at -redis under a key prefix of
// their own (so every run starts from zero), and stops them at the end.
// With -targets it drives instances already running. It sends -rate
// requests per second in all, for -duration, each to an instance picked at
// random, as a load balancer would; -user sets X-User-ID (for GET
// /items/{id}). The limit shown is that of the flow rule with a store
// whose resource is GET -path (or -path alone, for every method), as the
// first instance's GET /status lists it, per second.
//
// A second of the table counts the requests sent in that second of the
// run; the limits count on Redis's clock, and a sliding counter's window
// starts at its first request, so one second of the table may see a
// request more or less than the limit.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/examples/distributed/internal/server"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, os.Args[1:], os.Stdout)
	switch {
	case errors.Is(err, flag.ErrHelp):
		os.Exit(2)
	case err != nil:
		fmt.Fprintln(os.Stderr, "load:", err)
		os.Exit(1)
	}
}

// config is what the command line sets.
type config struct {
	targets   []string
	instances int
	redis     string
	rules     string
	path      string
	user      string
	rate      int
	duration  time.Duration
}

func parse(args []string, out io.Writer) (config, error) {
	var cfg config
	fs := flag.NewFlagSet("load", flag.ContinueOnError)
	fs.SetOutput(out)
	targets := fs.String("targets", "", "comma-separated `addresses` (host:port or URLs) of running instances; default: start -instances in this process")
	fs.IntVar(&cfg.instances, "instances", 3, "`number` of instances to start in this process, without -targets")
	fs.StringVar(&cfg.redis, "redis", server.DefaultRedis, "Redis `address` of the instances started here")
	fs.StringVar(&cfg.rules, "rules", "", "rules `file` of the instances started here (default: the example's rules)")
	fs.StringVar(&cfg.path, "path", "/hello", "`path` to request")
	fs.StringVar(&cfg.user, "user", "", "X-User-ID of the requests")
	fs.IntVar(&cfg.rate, "rate", 60, "requests per second, all instances together")
	fs.DurationVar(&cfg.duration, "duration", 5*time.Second, "how long to drive")
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	switch {
	case fs.NArg() > 0:
		return cfg, fmt.Errorf("unexpected arguments %q", fs.Args())
	case cfg.rate < 1 || cfg.rate > 10000:
		return cfg, fmt.Errorf("-rate must be between 1 and 10000, got %d", cfg.rate)
	case cfg.duration < time.Second || cfg.duration > time.Hour:
		return cfg, fmt.Errorf("-duration must be between 1s and 1h, got %s", cfg.duration)
	case !strings.HasPrefix(cfg.path, "/"):
		return cfg, fmt.Errorf("-path must start with /, got %q", cfg.path)
	case *targets == "" && (cfg.instances < 1 || cfg.instances > 26):
		return cfg, fmt.Errorf("-instances must be between 1 and 26, got %d", cfg.instances)
	}
	for _, t := range strings.Split(*targets, ",") {
		if t = strings.TrimSpace(t); t != "" {
			if !strings.Contains(t, "://") {
				t = "http://" + t
			}
			cfg.targets = append(cfg.targets, strings.TrimRight(t, "/"))
		}
	}
	return cfg, nil
}

// run drives the instances the arguments name (or starts) and writes the
// table to out. Everything it starts has stopped when it returns.
func run(ctx context.Context, args []string, out io.Writer) error {
	cfg, err := parse(args, out)
	if err != nil {
		return err
	}
	if len(cfg.targets) == 0 {
		stop, targets, err := startInstances(ctx, cfg, out)
		defer stop()
		if err != nil {
			return err
		}
		cfg.targets = targets
	}
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 256}}
	defer client.CloseIdleConnections()
	names := make([]string, len(cfg.targets))
	fallbacks := make([]int64, len(cfg.targets)) // until the requests, then during them
	var first server.Status
	for i, t := range cfg.targets {
		st, err := status(ctx, client, t)
		if err != nil {
			return err
		}
		names[i], fallbacks[i] = st.Instance, fallbacksOf(st)
		if i == 0 {
			first = st
		}
	}
	limit, desc := limitOf(first.Rules, cfg.path)
	fmt.Fprintf(out, "driving GET %s on %d instances at %d requests/s for %s; %s\n\n", cfg.path, len(cfg.targets), cfg.rate, cfg.duration, desc)
	secs := drive(ctx, client, cfg, names, limit, out)
	summarize(out, names, secs, limit)
	var total int64
	for i, t := range cfg.targets {
		st, err := status(ctx, client, t)
		if err != nil {
			return err
		}
		fallbacks[i] = fallbacksOf(st) - fallbacks[i]
		total += fallbacks[i]
	}
	if total > 0 {
		fmt.Fprintf(out, "decided by the rules' failure policy (Redis did not answer in time): %d;", total)
		for i, name := range names {
			fmt.Fprintf(out, " %s %d", name, fallbacks[i])
		}
		fmt.Fprintln(out)
	}
	return ctx.Err()
}

// fallbacksOf returns the decisions the failure policies of an instance's
// rules made since it started.
func fallbacksOf(st server.Status) int64 {
	var n int64
	for _, s := range st.Stores {
		n += s.Fallbacks
	}
	return n
}

// startInstances starts cfg.instances instances of the example's server
// in this process, on loopback ports, under a key prefix of their own.
func startInstances(ctx context.Context, cfg config, out io.Writer) (stop func(), targets []string, err error) {
	prefix := fmt.Sprintf("sluice-load-%08x", rand.Uint32())
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	stop = func() { cancel(); wg.Wait() }
	type started struct {
		addr string
		err  error
	}
	for i := range cfg.instances {
		name := string(rune('a' + i))
		ready := make(chan started, 2)
		wg.Go(func() {
			err := server.Run(ctx, server.Config{
				Addr: "127.0.0.1:0", Redis: cfg.redis, RulesFile: cfg.rules, Name: name, Prefix: prefix,
				Logf: func(format string, args ...any) {
					if strings.HasPrefix(format, "redis at") { // only trouble
						fmt.Fprintf(out, "instance "+name+": "+format+"\n", args...)
					}
				},
			}, func(addr string) { ready <- started{addr: addr} })
			ready <- started{err: fmt.Errorf("instance %s: %w", name, err)}
		})
		s := <-ready
		if s.err != nil {
			return stop, nil, s.err
		}
		targets = append(targets, "http://"+s.addr)
		fmt.Fprintf(out, "instance %s on %s\n", name, s.addr)
	}
	fmt.Fprintf(out, "%d instances sharing the Redis at %s (key prefix %s)\n", cfg.instances, cfg.redis, prefix)
	return stop, targets, nil
}

func status(ctx context.Context, client *http.Client, target string) (server.Status, error) {
	var st server.Status
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target+"/status", nil)
	if err != nil {
		return st, err
	}
	res, err := client.Do(req)
	if err != nil {
		return st, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return st, fmt.Errorf("%s/status: %s", target, res.Status)
	}
	if err := json.NewDecoder(res.Body).Decode(&st); err != nil {
		return st, fmt.Errorf("%s/status: %w", target, err)
	}
	return st, nil
}

// limitOf returns the per-second limit of the first flow rule with a store
// whose resource is GET path (or path alone, which matches every method;
// rules in force are in canonical form, and globs are not matched), and a
// description of it; 0 when none is.
func limitOf(rules []core.Rule, path string) (float64, string) {
	path = strings.SplitN(path, "?", 2)[0]
	resource := "GET " + path
	for _, r := range rules {
		if r.Store == "" || r.Kind != core.KindFlow || r.Resource != resource && r.Resource != path {
			continue
		}
		perSec := float64(r.Limit) * float64(time.Second) / float64(r.Window)
		return perSec, fmt.Sprintf("rule %s: %d per %s for all instances together (%s, %s)", r.Name, r.Limit, r.Window, r.Algorithm, r.Mode)
	}
	return 0, "no flow rule with a store matches " + resource
}

// counts are the outcomes of the requests sent to one instance in one
// second.
type counts struct{ passed, blocked, failed int }

// drive sends the requests and prints a row per second once its requests
// have been answered. It returns the counts per second and instance.
func drive(ctx context.Context, client *http.Client, cfg config, names []string, limit float64, out io.Writer) [][]counts {
	n := int((cfg.duration + time.Second - 1) / time.Second)
	secs := make([][]counts, n)
	pending := make([]sync.WaitGroup, n)
	for i := range secs {
		secs[i] = make([]counts, len(names))
		pending[i].Add(1) // until the second is over
	}
	var mu sync.Mutex
	widths := make([]int, len(names))
	fmt.Fprintf(out, "%4s", "sec")
	for i, name := range names {
		widths[i] = max(len(name)+2, 6)
		fmt.Fprintf(out, "%*s", widths[i], name)
	}
	fmt.Fprintf(out, "%8s%8s%9s\n", "total", "limit", "blocked")

	printed := make(chan struct{})
	go func() { // the rows
		defer close(printed)
		for s := range n {
			pending[s].Wait()
			mu.Lock()
			var line strings.Builder
			fmt.Fprintf(&line, "%4d", s+1)
			total, blocked := 0, 0
			for i, c := range secs[s] {
				fmt.Fprintf(&line, "%*d", widths[i], c.passed)
				total += c.passed
				blocked += c.blocked
			}
			mu.Unlock()
			fmt.Fprintf(&line, "%8d%8s%9d\n", total, limitText(limit), blocked)
			_, _ = io.WriteString(out, line.String())
		}
	}()

	start := time.Now()
	end := start.Add(cfg.duration)
	sem := make(chan struct{}, 256)
	tick := time.NewTicker(time.Second / time.Duration(cfg.rate))
	defer tick.Stop()
	closed := 0 // the seconds before closed are over: their rows may print
	for {
		now := time.Now()
		s := int(now.Sub(start) / time.Second)
		for ; closed < min(s, n); closed++ {
			pending[closed].Done()
		}
		if !now.Before(end) || s >= n || ctx.Err() != nil {
			break
		}
		t := rand.IntN(len(names)) // a load balancer picking at random
		sem <- struct{}{}
		pending[s].Add(1)
		go func() {
			defer func() { <-sem; pending[s].Done() }()
			c := request(ctx, client, cfg.targets[t]+cfg.path, cfg.user)
			mu.Lock()
			switch c {
			case http.StatusOK:
				secs[s][t].passed++
			case http.StatusTooManyRequests, http.StatusServiceUnavailable:
				secs[s][t].blocked++
			default:
				secs[s][t].failed++
			}
			mu.Unlock()
		}()
		select {
		case <-tick.C:
		case <-ctx.Done():
		}
	}
	for ; closed < n; closed++ {
		pending[closed].Done()
	}
	<-printed
	return secs
}

// request sends one GET and returns its status, or 0 when it failed.
func request(ctx context.Context, client *http.Client, url, user string) int {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0
	}
	if user != "" {
		req.Header.Set("X-User-ID", user)
	}
	res, err := client.Do(req)
	if err != nil {
		return 0
	}
	_, _ = io.Copy(io.Discard, res.Body)
	_ = res.Body.Close()
	return res.StatusCode
}

func limitText(limit float64) string {
	if limit == 0 {
		return "-"
	}
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.2f", limit), "0"), ".")
}

// summarize prints the totals of the run.
func summarize(out io.Writer, names []string, secs [][]counts, limit float64) {
	var passed, blocked, failed, busiest int
	per := make([]int, len(names))
	for _, row := range secs {
		total := 0
		for i, c := range row {
			per[i] += c.passed
			total += c.passed
			blocked += c.blocked
			failed += c.failed
		}
		passed += total
		busiest = max(busiest, total)
	}
	fmt.Fprintf(out, "\nadmitted: %d in %d s (%.1f/s; limit %s/s); per instance:", passed, len(secs), float64(passed)/float64(len(secs)), limitText(limit))
	for i, name := range names {
		fmt.Fprintf(out, " %s %d", name, per[i])
	}
	fmt.Fprintf(out, "; busiest second %d; blocked %d; failed %d\n", busiest, blocked, failed)
}
