package engine

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"runtime/trace"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// unloaded is the load at which the unloaded latency is measured: half
// the capacity, at which requests sent at a steady rate never wait for a
// worker, so that the percentiles rest on many requests.
const unloaded = 0.5

// Main runs the overload command with p's protections: it measures as
// the command line says, printing to the standard output, and exits with
// status 2 on an error; started as the load generator (see generatorEnv),
// it runs as that instead.
func (p Program) Main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if os.Getenv(generatorEnv) == "1" {
		if err := generator(ctx, os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "overload load generator:", err)
			stop()
			os.Exit(2)
		}
		return
	}
	if err := p.Run(ctx, os.Args[1:], os.Stdout); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "overload:", err)
		}
		stop()
		os.Exit(2)
	}
}

// config is what a run measures, from the flags.
type config struct {
	backend           string // sleep or cpu
	workers           int
	service, deadline time.Duration
	warmup, duration  time.Duration
	loads             []float64
	protections       []string
	slowdown, levels  bool
	inProcess         bool   // the load generator in this process
	trace             string // the file of the run's execution trace, if any
	// samples receives the rule's state sampled every 100ms in each row
	// (see sample), from the file of -samples; nil without.
	samples     io.Writer
	samplesFile string
	prog        Program // its protections, trace and order of rows
	// rounds is the work per request of the cpu backend (see calibrate),
	// capacity its capacity measured (measureCapacity); 0 for the sleep
	// backend, whose capacity is workers/service.
	rounds   int64
	capacity float64
}

// spin reports whether the backend computes rather than sleeps.
func (c config) spin() bool { return c.backend == "cpu" }

// cost is the backend's cost per request (see backend).
func (c config) cost() int64 {
	if c.spin() {
		return c.rounds
	}
	return int64(c.service)
}

// rate returns the backend's capacity, in requests per second.
func (c config) rate() float64 {
	if c.capacity > 0 {
		return c.capacity
	}
	return float64(c.workers) / c.service.Seconds()
}

func (p Program) parse(args []string, out io.Writer) (config, error) {
	c := config{prog: p}
	if err := p.check(); err != nil {
		return c, err
	}
	fs := flag.NewFlagSet("overload", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.StringVar(&c.backend, "backend", "sleep", "the backend: sleep (waits -service per request) or cpu (computes for about -service on one CPU)")
	fs.IntVar(&c.workers, "workers", 10, "requests the backend serves at a time (cpu: default GOMAXPROCS)")
	fs.DurationVar(&c.service, "service", 50*time.Millisecond, "the time the backend takes per request, with no other work")
	fs.DurationVar(&c.deadline, "deadline", time.Second, "the clients' deadline per request")
	fs.DurationVar(&c.warmup, "warmup", 5*time.Second, "load before each measurement, not counted")
	fs.DurationVar(&c.duration, "duration", 10*time.Second, "the time each measurement lasts")
	loads := fs.String("load", "1,2,5", "the loads, in multiples of the capacity, comma-separated")
	prot := fs.String("protect", "none,static,adaptive,system,system-rt", "the protections, comma-separated: "+strings.Join(c.protectionNames(), ", "))
	fs.BoolVar(&c.slowdown, "slowdown", true, "also run the adaptive rule while the backend becomes 2x slower")
	fs.BoolVar(&c.levels, "priority", true, "also run the protections that shed by priority level with two levels")
	fs.StringVar(&c.trace, "trace", "", "write the execution trace of the server's process (runtime/trace) to this file; go tool trace -pprof=sched reads where goroutines waited to run")
	fs.StringVar(&c.samplesFile, "samples", "", "write the rule's state every 100ms of each row to this file, tab-separated: protection, load, seconds since the load started, limit (- while the system rule's bound does not apply), in flight, the response times it compares in ms (adaptive: recent and minimum; system: average and lowest of the last second), and the system rule's CPU reading")
	fs.BoolVar(&c.inProcess, "inprocess", false, "run the load generator in this process, not in a child process: its goroutines then wait for the CPUs behind the backend's")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if c.spin() && !set["workers"] {
		c.workers = runtime.GOMAXPROCS(0)
	}
	switch {
	case c.backend != "sleep" && c.backend != "cpu":
		return c, fmt.Errorf("-backend: unknown backend %q (known: sleep, cpu)", c.backend)
	case c.workers < 1:
		return c, fmt.Errorf("-workers must be >= 1, got %d", c.workers)
	case c.service <= 0 || c.deadline <= 0 || c.duration <= 0 || c.warmup < 0:
		return c, errors.New("-service, -deadline and -duration must be > 0, -warmup >= 0")
	}
	for f := range strings.SplitSeq(*loads, ",") {
		v, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(f), "x"), 64)
		if err != nil || v <= 0 {
			return c, fmt.Errorf("-load: %q is not a positive number", f)
		}
		c.loads = append(c.loads, v)
	}
	for f := range strings.SplitSeq(*prot, ",") {
		f = strings.TrimSpace(f)
		if _, ok := c.protection(f); !ok {
			return c, fmt.Errorf("-protect: unknown protection %q (known: %s)", f, strings.Join(c.protectionNames(), ", "))
		}
		c.protections = append(c.protections, f)
	}
	return c, nil
}

// Run measures as args, the command's flags, say, printing to out.
func (p Program) Run(ctx context.Context, args []string, out io.Writer) (err error) {
	c, err := p.parse(args, out)
	if err != nil {
		return err
	}
	if c.trace != "" {
		f, err := os.Create(c.trace)
		if err != nil {
			return err
		}
		if err := trace.Start(f); err != nil {
			return errors.Join(err, f.Close())
		}
		defer func() {
			trace.Stop()
			err = errors.Join(err, f.Close())
		}()
	}
	if c.samplesFile != "" {
		f, err := os.Create(c.samplesFile)
		if err != nil {
			return err
		}
		defer func() { err = errors.Join(err, f.Close()) }()
		fmt.Fprintln(f, "protection\tload\tat\tlimit\tinflight\trecent_ms\tmin_ms\thost")
		c.samples = f
	}
	if c.spin() {
		c.rounds = calibrate(c.service)
		if c.capacity, err = c.measureCapacity(ctx); err != nil {
			return err
		}
		fmt.Fprintf(out, "backend: cpu, %d workers x %d rounds of SHA-256 over %d bytes (about %v on one idle CPU; GOMAXPROCS %d)\n",
			c.workers, c.rounds, workBlock, c.service, runtime.GOMAXPROCS(0))
		fmt.Fprintf(out, "capacity, measured closed loop over HTTP with the load generator on the same CPUs: %.0f requests/s; deadline %v; each row: %v of load, then %v measured\n",
			c.capacity, c.deadline, c.warmup, c.duration)
	} else {
		fmt.Fprintf(out, "backend: %d workers x %v = %.0f requests/s; deadline %v; each row: %v of load, then %v measured\n",
			c.workers, c.service, c.rate(), c.deadline, c.warmup, c.duration)
	}
	printHostLoad(out, "at start")
	base, err := c.measure(ctx, "none", unloaded)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "unloaded (%gx, no protection: no request waits for a worker): p50 %s, p99 %s, sched p99 %s\n", unloaded, ms(base.p50), ms(base.p99), ms(base.wait))
	where := "a child process"
	if c.inProcess {
		where = "this process (-inprocess)"
	}
	fmt.Fprintf(out, "load generator: %s; sched p99: of how long the server process's goroutines waited to run\n\n", where)
	t := newTable(out, c, base.p99)
	for i := range len(c.protections) * len(c.loads) {
		pi, li := i/len(c.loads), i%len(c.loads)
		if p.Interleave {
			pi, li = i%len(c.protections), i/len(c.protections)
		}
		r, err := c.measure(ctx, c.protections[pi], c.loads[li])
		if err != nil {
			return err
		}
		t.row(r)
	}
	t.flush()
	printHostLoad(out, "after the table")
	if c.slowdown {
		if err := c.slowdownRun(ctx, out, base.p99); err != nil {
			return err
		}
	}
	if c.levels {
		return c.priorityRun(ctx, out)
	}
	return nil
}

// printHostLoad prints the host's load average, when it can be read, when
// saying when: the other processes of a busy host slow the backend and
// the load generator, and a table is read with it.
func printHostLoad(out io.Writer, when string) {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) >= 3 {
		fmt.Fprintf(out, "host load average %s: %s (%d CPUs)\n", when, strings.Join(f[:3], " "), runtime.NumCPU())
	}
}
