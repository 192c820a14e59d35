package sluiceenvoy

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"
)

// Watcher keeps a Server's config in step with config files while it
// serves: every poll it reads the files (see LoadFiles) and, when their
// content changed and two consecutive polls saw the same content (a file
// caught halfway through its writing does not apply), gives the Server the
// new config. A config with a problem is logged, once per content, and the
// config in force stays. Close stops it.
//
// It polls rather than watching file system events, as package rulesfile's
// Watcher does, and for the same reasons; it reads the files at each poll
// (config files are small), so it sees every change, whatever their times.
type Watcher struct {
	s        *Server
	paths    []string
	interval time.Duration // WatcherOptions.Interval
	log      *slog.Logger
	onReload func(error)
	stop     chan struct{}
	done     chan struct{}
}

// defaultWatchInterval is the time between a Watcher's polls when
// WatcherOptions.Interval is 0.
const defaultWatchInterval = time.Second

// WatcherOptions configures a Watcher. Zero fields take their defaults.
type WatcherOptions struct {
	// Interval is the time between polls; default 1s.
	Interval time.Duration
	// Logger receives a line per config applied (Info) and per problem
	// (Warn); default slog.Default().
	Logger *slog.Logger
	// OnReload, when set, is called after each attempt to apply a new
	// content: with nil when it applied, else with the problem.
	OnReload func(error)
}

// NewWatcher starts a Watcher of the config files at paths (files and
// directories, as LoadFiles takes them) for s. The first poll is one
// Interval away: s serves the config it was made with until then.
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
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	w := &Watcher{s: s, paths: slices.Clone(paths), interval: o.Interval, log: o.Logger, onReload: o.OnReload,
		stop: make(chan struct{}), done: make(chan struct{})}
	first, _ := w.fingerprint()
	go w.run(first)
	return w, nil
}

// Close stops w and waits for its goroutine to end. It is idempotent.
func (w *Watcher) Close() error {
	select {
	case <-w.stop:
	default:
		close(w.stop)
	}
	<-w.done
	return nil
}

func (w *Watcher) run(applied [32]byte) {
	defer close(w.done)
	t := time.NewTicker(w.interval)
	defer t.Stop()
	var last, failed [32]byte
	for {
		select {
		case <-w.stop:
			return
		case <-t.C:
		}
		fp, err := w.fingerprint()
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
		if err == nil {
			var c Config
			if c, err = LoadFiles(w.paths...); err == nil {
				err = w.s.SetConfig(c)
			}
		}
		if err == nil {
			applied, failed = fp, [32]byte{} // a failure after it is reported again
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

// fingerprint hashes the names and contents of the config files.
func (w *Watcher) fingerprint() ([32]byte, error) {
	files, err := configFiles(w.paths)
	if err != nil {
		return [32]byte{}, err
	}
	h := sha256.New()
	for _, f := range files {
		data, err := readConfig(f)
		if err != nil {
			return [32]byte{}, err
		}
		fmt.Fprintf(h, "%s\x00%d\x00", f, len(data))
		h.Write(data)
	}
	var out [32]byte
	h.Sum(out[:0])
	return out, nil
}
