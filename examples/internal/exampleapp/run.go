package exampleapp

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/rulesfile"
)

// NewGuard returns a Guard with the rules of rulesFile, or those of the
// YAML defaults when rulesFile is "". With a file and reload > 0, it also
// runs a rulesfile.Watcher that looks at the file every reload and applies
// its changes, logging to logger (as the Guard does), until ctx ends or stop is called. stop
// stops the watcher, waits for it to return and closes the Guard; call it
// once the Guard is no longer used.
func NewGuard(ctx context.Context, rulesFile string, defaults []byte, reload time.Duration, logger *slog.Logger) (guard *core.Guard, stop func(), err error) {
	if rulesFile == "" {
		rules, err := rulesfile.Parse(defaults)
		if err != nil {
			return nil, nil, fmt.Errorf("default rules: %w", err)
		}
		guard, err := core.New(core.WithRules(rules...), core.WithLogger(logger))
		if err != nil {
			return nil, nil, err
		}
		return guard, func() { _ = guard.Close() }, nil
	}
	guard, err = core.New(core.WithLogger(logger))
	if err != nil {
		return nil, nil, err
	}
	opts := []rulesfile.WatchOption{rulesfile.WithLogger(logger)}
	if reload > 0 {
		opts = append(opts, rulesfile.WithPollInterval(reload))
	}
	w, err := rulesfile.NewWatcher(guard, rulesFile, opts...) // loads the file
	if err != nil {
		_ = guard.Close()
		return nil, nil, err
	}
	if reload <= 0 {
		return guard, func() { _ = guard.Close() }, nil
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = w.Run(ctx) // until ctx ends
	}()
	return guard, func() {
		cancel()
		<-done
		_ = guard.Close()
	}, nil
}

// Run is the net/http, gin and echo examples' program: it parses args
//
//	-addr ADDR       address to listen on (default 127.0.0.1:8080)
//	-rules FILE      rules file (YAML, or JSON with a .json name); default: the embedded rules
//	-reload PERIOD   how often to look at the rules file for changes (default 1s; 0: never)
//
// makes a Guard with those rules, serves handler(guard) on the address,
// with the Guard's dashboard at /debug/sluice/ and metrics at /metrics (see
// Ops), and
// applies the changes of the rules file, until ctx ends; it then shuts down
// gracefully (see Serve). It logs to out, and calls ready, when not nil,
// with the address it listens on.
func Run(ctx context.Context, name string, args []string, out io.Writer, ready func(addr string), handler func(*core.Guard) http.Handler) error {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(out)
	addr := fs.String("addr", "127.0.0.1:8080", "address to listen on")
	rulesFile := fs.String("rules", "", "rules `file` (YAML, or JSON with a .json name); default: the embedded rules")
	reload := fs.Duration("reload", time.Second, "how often to look at the rules file for changes (0: never)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	logger := slog.New(slog.NewTextHandler(out, nil))
	guard, stop, err := NewGuard(ctx, *rulesFile, defaultRules, *reload, logger)
	if err != nil {
		return err
	}
	defer stop()
	h, err := Ops(guard, handler(guard))
	if err != nil {
		return err
	}
	return Serve(ctx, *addr, h, func(addr string) {
		logger.Info(name+" example listening", "url", "http://"+addr, "dashboard", "http://"+addr+"/debug/sluice/", "metrics", "http://"+addr+"/metrics")
		if ready != nil {
			ready(addr)
		}
	})
}
