package main

import (
	"context"
	_ "embed"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/rulesfile"
)

//go:embed rules.yaml
var defaultRules string

// config is what the command line sets.
type config struct {
	// Duration is how long to drive traffic; it must be > 0.
	Duration time.Duration
	// RulesFile is a YAML or JSON rules file; "" means the embedded rules.yaml.
	RulesFile string
	// Addr is the address to serve on; "" means a random loopback port.
	Addr string
}

func main() {
	var cfg config
	flag.DurationVar(&cfg.Duration, "duration", 10*time.Second, "how long to drive traffic")
	flag.StringVar(&cfg.RulesFile, "rules", "", "rules `file` (YAML, or JSON when named *.json); default: the embedded rules.yaml")
	flag.StringVar(&cfg.Addr, "addr", "", "`address` to serve on, e.g. 127.0.0.1:8080, to try it with curl while it runs (default: a random loopback port)")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "demo: unexpected arguments %q\n", flag.Args())
		flag.Usage()
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop() // a second interrupt kills the demo
	}()
	err := run(ctx, os.Stdout, cfg)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

// run serves, drives traffic for cfg.Duration (or until ctx ends) and writes
// the live table and the summary to w. It returns an error when the
// configuration or the rules are bad, when the server cannot start, when
// requests fail, or when a rule let through more than its limit allows.
// Everything it starts has stopped when it returns.
func run(ctx context.Context, w io.Writer, cfg config) error {
	if cfg.Duration <= 0 {
		return fmt.Errorf("-duration must be > 0, got %s", cfg.Duration)
	}
	rules, source, err := loadRules(cfg.RulesFile)
	if err != nil {
		return err
	}
	// The Guard's own log (breaker changes, rules that block) would break
	// up the table: the table says it all.
	guard, err := core.New(core.WithRules(rules...), core.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		return err
	}
	defer guard.Close()
	routes, err := ruleRoutes(guard.Rules(), routeHello, routeItems, routeSlow)
	if err != nil {
		return err
	}
	st := newStats(guard.Rules(), routes, demoPatterns())
	srv, err := startServer(cfg.Addr, guard, st)
	if err != nil {
		return err
	}
	defer srv.close()

	rep := newReport(w, st)
	rep.header(srv.url, cfg.Duration, source)

	// Requests use reqCtx, which ends only with ctx: requests in flight at
	// the deadline complete and are counted. Generating stops at the deadline.
	reqCtx, cancelReqs := context.WithCancel(ctx)
	defer cancelReqs()
	drv := newDriver(reqCtx, srv.url, st)
	defer drv.close()

	start := time.Now()
	deadline := start.Add(cfg.Duration)
	genCtx, stopGen := context.WithDeadline(ctx, deadline)
	defer stopGen()
	var wg sync.WaitGroup
	for _, p := range st.patterns {
		wg.Go(func() { p.def.drive(genCtx, drv, p, start) })
	}

	sec := 1
	for ; ; sec++ {
		at := start.Add(time.Duration(sec) * time.Second)
		if !at.Before(deadline) || !sleepUntil(genCtx, at) {
			break
		}
		rep.second(sec)
	}
	<-genCtx.Done()
	wg.Wait()
	elapsed := time.Since(start)
	rep.second(sec)
	interrupted := ctx.Err() != nil
	return rep.summary(elapsed, interrupted)
}

// loadRules returns the rules of file, or the embedded ones when file is "",
// and a description of where they came from.
func loadRules(file string) ([]core.Rule, string, error) {
	if file == "" {
		rules, err := rulesfile.Parse([]byte(defaultRules))
		if err != nil {
			return nil, "", fmt.Errorf("embedded rules.yaml: %w", err)
		}
		return rules, "embedded rules.yaml", nil
	}
	rules, err := rulesfile.Load(file) // its errors name the file, the rule and the field
	if err != nil {
		return nil, "", err
	}
	return rules, file, nil
}

// sleepUntil waits until t and reports true, or reports false when ctx ends
// first.
func sleepUntil(ctx context.Context, t time.Time) bool {
	timer := time.NewTimer(time.Until(t))
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-timer.C:
		return true
	}
}
