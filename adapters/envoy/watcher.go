package sluiceenvoy

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/sluicekit/sluice/core/clock"
)

// Watcher keeps a Server's config in step with config files while it
// serves: every poll it reads the files (see LoadFiles) and, when their
// content is not the config in force and two consecutive polls saw the same
// content (a file caught halfway through its writing does not apply), gives
// the Server the new config. A config with a problem is logged, once per
// content, and the config in force stays. Close stops it.
//
// It polls rather than watching file system events, as package rulesfile's
// Watcher does, and for the same reasons; it reads the files at each poll
// (config files are small), so it sees every change, whatever their times.
type Watcher struct {
	s        *Server
	paths    []string
	interval time.Duration // WatcherOptions.Interval
	clk      clock.Clock
	log      *slog.Logger
	onReload func(error)
	stop     context.CancelFunc
	done     chan struct{}
}

// defaultWatchInterval is the time between a Watcher's polls when
// WatcherOptions.Interval is 0.
const defaultWatchInterval = time.Second

// WatcherOptions configures a Watcher. Zero fields take their defaults.
type WatcherOptions struct {
	// Interval is the time between polls; default 1s.
	Interval time.Duration
	// Clock measures the interval; default the Server's Guard's clock
	// (core.WithClock), so that a test drives the Watcher with a
	// clock.Fake.
	Clock clock.Clock
	// Logger receives a line per config applied (Info) and per problem
	// (Warn); default slog.Default().
	Logger *slog.Logger
	// OnReload, when set, is called after each attempt to apply a new
	// content: with nil when it applied, else with the problem.
	OnReload func(error)
}

// NewWatcher starts a Watcher of the config files at paths (files and
// directories, as LoadFiles takes them) for s. The first poll is one
// Interval away: s serves the config it was made with until then. The
// Watcher takes for the config in force that of the files LoadFiles read,
// when s was given a Config LoadFiles returned for the same paths: a change
// made to the files after that, before NewWatcher, applies at its first
// polls. Given any other Config, s is given the files' config at the first
// polls.
func NewWatcher(s *Server, paths []string, o WatcherOptions) (*Watcher, error) {
	if s == nil {
		return nil, errors.New("sluiceenvoy: NewWatcher: nil *Server")
	}
	if len(paths) == 0 {
		return nil, errors.New("sluiceenvoy: NewWatcher: no path")
	}
	if o.Interval < 0 {
		return nil, fmt.Errorf("sluiceenvoy: NewWatcher: Interval must be >= 0, got %s", o.Interval)
	}
	if o.Interval == 0 {
		o.Interval = defaultWatchInterval
	}
	if o.Clock == nil {
		o.Clock = s.g.Clock()
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	ctx, stop := context.WithCancel(context.Background())
	w := &Watcher{s: s, paths: slices.Clone(paths), interval: o.Interval, clk: o.Clock, log: o.Logger, onReload: o.OnReload,
		stop: stop, done: make(chan struct{})}
	go w.run(ctx, s.st.Load().files)
	return w, nil
}

// Close stops w and waits for its goroutine to end. It is idempotent.
func (w *Watcher) Close() error {
	w.stop()
	<-w.done
	return nil
}

// run polls until ctx is done; applied is the fingerprint of the files
// whose config is in force.
func (w *Watcher) run(ctx context.Context, applied [32]byte) {
	defer close(w.done)
	var last, failed [32]byte
	for w.clk.Sleep(ctx, w.interval) == nil && ctx.Err() == nil {
		fp, err := fingerprint(w.paths)
		if err != nil {
			fp = sha256.Sum256([]byte(err.Error())) // report each error once
		}
		if err == nil && fp == applied && failed != ([32]byte{}) {
			failed = [32]byte{} // a failure after it is reported again
			w.log.Info("sluiceenvoy: config files are back to the config in force", "paths", w.paths)
		}
		if err == nil && (fp == applied || fp != last) {
			last = fp
			continue
		}
		last = fp
		var c Config
		if err == nil {
			if c, err = LoadFiles(w.paths...); err == nil {
				err = w.s.SetConfig(c)
			}
		}
		if err == nil {
			// The files as LoadFiles read them, which may be newer than fp.
			applied, failed = c.files, [32]byte{} // a failure after it is reported again
			w.log.Info("sluiceenvoy: config applied", "paths", w.paths)
		} else if fp != failed {
			failed = fp
			w.log.Warn("sluiceenvoy: config not applied; the one in force stays", "paths", w.paths, "error", err)
		} else {
			continue
		}
		if w.onReload != nil {
			w.onReload(err)
		}
	}
}
