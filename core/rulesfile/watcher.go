package rulesfile

import (
	"cmp"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"reflect"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluicekit/sluice/core"
)

const (
	defaultPollInterval = time.Second // WithPollInterval's default
	// mtimeSlack is how long after a file's modification time a Watcher
	// keeps reading the file although its size and modification time look
	// unchanged: file systems record modification times coarsely (2s on FAT).
	mtimeSlack = 2 * time.Second
	// maxLoggedNames bounds the rule names a Watcher puts in one log line
	// per list (added, removed, changed); Change has them all.
	maxLoggedNames    = 10
	maxUnsettledPolls = 10 // polls in a row seeing a new version before a Watcher reports it
)

// Watcher keeps a Guard's rules in step with a rules file while the
// Guard serves (see the package documentation, Reloading). The file holds
// the Guard's whole rule set: rules given to core.New, or set with
// SetRules, are replaced by the file's at the first load.
//
// A Watcher is safe for concurrent use. Its callbacks are called
// while it holds its lock, from Run's goroutine or the caller of
// NewWatcher or Reload, one at a time; they must not call the
// watcher's methods.
type Watcher struct {
	guard    *core.Guard
	path     string
	format   fileFormat
	interval time.Duration
	logger   *slog.Logger // nil: slog.Default()
	onReload func(Change, error)
	running  atomic.Bool

	mu sync.Mutex // guards the fields below
	// last is the previous poll's observation of the file; info and readAt
	// are the file's FileInfo and the wall time when it was last read.
	last    observation
	info    os.FileInfo
	readAt  time.Time
	applied obsKey // the key of the content in force
	// reported is the key of the last problem reported, valid while
	// failing is true; err is the problem of the file as last seen.
	reported  obsKey
	failing   bool
	err       error
	stats     ReloadStats // but Failing, which is err != nil
	unsettled int         // polls in a row that saw the file changed
}

// ReloadStats are the counts of a Watcher's loads of its rules file
// (Watcher.Stats), for metrics and alerts.
type ReloadStats struct {
	Path string // the rules file's path, as NewWatcher was given it
	// Reloads counts the versions of the file applied, NewWatcher's
	// included; Failures the loads refused: each version (or read error)
	// the watcher tried, and each Reload that found the file invalid.
	Reloads, Failures        int64
	LastSuccess, LastFailure time.Time // the wall-clock times of the last of each; zero before the first
	// LastDuration is how long the last load, applied or refused, took to
	// parse the file and set its rules.
	LastDuration time.Duration
	// Failing is true while the rules in force are not the file's: its
	// last version was refused, and Err says why (nil when not Failing).
	Failing bool
	Err     error
}

// Change describes a rule set a Watcher applied. Rules are named by
// core.Rule.Name (the name the file gives them, or the one
// core.NormalizeRules derives).
type Change struct {
	Path  string // the rules file
	Rules int    // the number of rules in force after the change
	// Added, Removed and Changed name the rules that the new rule set has
	// and the old had not, the old had and the new has not, and that both
	// have with different fields. A changed rule keeps its statistics when
	// its kind and resource are unchanged, and its state when its param is
	// too (see core.Guard.SetRules).
	Added, Removed, Changed []string
}

// obsKey identifies what a poll saw: the SHA-256 of the file's content, or
// the text of the error reading it.
type obsKey struct {
	sum [sha256.Size]byte
	err string
}

// observation is what a poll saw: the file's content, or why it cannot be read.
type observation struct {
	key  obsKey
	data []byte
	err  error
}

// WatchOption configures a Watcher made by NewWatcher.
type WatchOption interface {
	apply(*Watcher) error
}

type watchOptionFunc func(*Watcher) error

func (f watchOptionFunc) apply(w *Watcher) error { return f(w) }

// watchOption returns a WatchOption that fails with problem when bad, and
// else configures a Watcher with set.
func watchOption(bad bool, problem string, set func(*Watcher)) WatchOption {
	return watchOptionFunc(func(w *Watcher) error {
		if bad {
			return errors.New(problem)
		}
		set(w)
		return nil
	})
}

// WithPollInterval sets how often the watcher looks at the file (default
// 1s). A change applies one to two intervals after it is
// written (see Partial writes in the package documentation).
func WithPollInterval(d time.Duration) WatchOption {
	return watchOption(d <= 0, fmt.Sprintf("WithPollInterval: interval must be > 0, got %v", d),
		func(w *Watcher) { w.interval = d })
}

// WithLogger makes the watcher log to l instead of slog.Default().
// To log nothing, pass slog.New(slog.DiscardHandler).
func WithLogger(l *slog.Logger) WatchOption {
	return watchOption(l == nil, "WithLogger: logger is nil", func(w *Watcher) { w.logger = l })
}

// OnReload makes the watcher call f(change, nil) with each rule set it
// applies, the first (by NewWatcher) included, and f(Change{Path: path},
// err) with each problem that keeps a version of the file from applying,
// once per distinct content or error: after Run starts, once two
// consecutive polls saw it (see Watcher). An invalid file gives an error
// wrapping a *core.RulesError, whose Problems name each rule and field at
// fault; a file that cannot be read gives the error of the file system
// (errors.Is(err, fs.ErrNotExist) for a deleted file).
func OnReload(f func(Change, error)) WatchOption {
	return watchOption(f == nil, "OnReload: func is nil", func(w *Watcher) { w.onReload = f })
}

// NewWatcher loads the rules file at path (as Load reads it) into g with
// g.SetRules, and returns a watcher that applies the file's later versions
// while Run runs. It returns an error, and changes nothing, when an option
// is invalid or the file cannot be read or is invalid. The watcher measures
// its poll interval on g's clock (core.WithClock), so tests drive it with a
// clock.Fake.
func NewWatcher(g *core.Guard, path string, opts ...WatchOption) (*Watcher, error) {
	if g == nil {
		return nil, errors.New("sluice: rulesfile.NewWatcher: guard is nil")
	}
	if path == "" {
		return nil, errors.New("sluice: rulesfile.NewWatcher: path is empty")
	}
	w := &Watcher{guard: g, path: path, format: formatOf(path), interval: defaultPollInterval}
	for i, o := range opts {
		if o == nil {
			return nil, fmt.Errorf("sluice: rulesfile.NewWatcher: option %d is nil", i)
		}
		if err := o.apply(w); err != nil {
			return nil, fmt.Errorf("sluice: %w", err)
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.last = w.observe()
	if err := w.load(context.Background(), w.last, true); err != nil {
		return nil, err
	}
	return w, nil
}

// Run polls the rules file every poll interval and applies each new version
// of it, until ctx is done; it then returns ctx.Err(). It returns an error
// at once when Run is already running. The caller owns the goroutine Run
// runs on, typically:
//
//	go func() { _ = w.Run(ctx) }()
func (w *Watcher) Run(ctx context.Context) error {
	if !w.running.CompareAndSwap(false, true) {
		return errors.New("sluice: rulesfile.Watcher.Run is already running")
	}
	defer w.running.Store(false)
	c := w.guard.Clock()
	for c.Sleep(ctx, w.interval) == nil && ctx.Err() == nil {
		_ = w.poll(ctx, false)
	}
	return ctx.Err()
}

// Reload reads the rules file now and, when its content differs from the
// rules in force, applies it at once, without waiting for it to hold still
// for a poll (for a caller that knows the file is complete: a handler of
// SIGHUP, say). It returns the problem that keeps the file from applying,
// also reported like Run's unless already reported for the same content,
// or nil when the file's rules are in force.
func (w *Watcher) Reload() error {
	return w.poll(context.Background(), true)
}

// Stats returns the counts of the watcher's loads so far, and the problem
// of the rules file as it last saw it.
func (w *Watcher) Stats() ReloadStats {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := w.stats
	s.Path, s.Failing, s.Err = w.path, w.err != nil, w.err
	return s
}

// poll looks at the file and applies or reports what it holds: at once
// when now, else once two consecutive polls saw the same and it was not
// reported already. It returns what keeps the file from applying.
func (w *Watcher) poll(ctx context.Context, now bool) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	o := w.observe()
	stable := o.key == w.last.key
	w.last = o
	if w.unsettled++; stable {
		w.unsettled = 0
	}
	switch {
	case o.key == w.applied: // after the file was seen unreadable or different
		if w.err != nil {
			w.log().LogAttrs(ctx, slog.LevelInfo, "sluice: rules file is back to the rules in force", slog.String("path", w.path))
		}
		w.failing, w.err = false, nil
		return nil
	case !now && w.unsettled == maxUnsettledPolls: // no version applies, and none is refused: say so
		// The version the file comes to rest on is reported, even one refused before.
		w.failing, w.reported, w.err = true, obsKey{}, fmt.Errorf("rules file %s: changed at each of the last %d polls; a version applies once two polls in a row see it", w.path, maxUnsettledPolls)
		w.log().LogAttrs(ctx, slog.LevelWarn, "sluice: rules file never holds still; the rules in force are kept", slog.String("path", w.path), slog.String("err", w.err.Error()))
		if w.onReload != nil {
			w.onReload(Change{Path: w.path}, w.err)
		}
		return w.err
	case !now && (!stable || w.failing && o.key == w.reported):
		return nil // wait for the content to hold still; or it already failed
	}
	return w.load(ctx, o, false)
}

// observe returns the file's content, or why it cannot be read. It skips
// reading a file whose identity, size and modification time are those of
// the last read, unless that modification time was recent when the file
// was read (see mtimeSlack), and returns the last read's observation.
func (w *Watcher) observe() observation {
	info, err := os.Stat(w.path)
	if err != nil {
		return readFailure(err)
	}
	if prev := w.info; prev != nil && w.last.err == nil && os.SameFile(prev, info) &&
		prev.Size() == info.Size() && prev.ModTime().Equal(info.ModTime()) &&
		w.readAt.Sub(info.ModTime()) > mtimeSlack {
		return w.last
	}
	readAt := time.Now()
	data, info, err := readLimited(w.path, w.format)
	if err != nil {
		return readFailure(err)
	}
	w.info, w.readAt = info, readAt
	return observation{key: obsKey{sum: sha256.Sum256(data)}, data: data}
}

// readFailure is the observation of a file that cannot be read.
func readFailure(err error) observation {
	return observation{key: obsKey{err: err.Error()}, err: err}
}

// load applies the content o saw, or reports why it cannot; NewWatcher's load
// (initial) reports nothing: it returns the error.
func (w *Watcher) load(ctx context.Context, o observation, initial bool) error {
	start := time.Now()
	problem := o.err // what is wrong, for the log, which gives the path apart
	if problem == nil {
		rules, p, err := read(o.data, w.format)
		if err == nil {
			before := w.guard.Rules()
			if err = p.withLines(w.guard.SetRules(rules), 0); err == nil {
				w.applied, w.failing, w.err = o.key, false, nil
				w.stats.Reloads, w.stats.LastSuccess = w.stats.Reloads+1, time.Now()
				w.stats.LastDuration = w.stats.LastSuccess.Sub(start)
				w.applyChange(ctx, before, w.guard.Rules(), initial)
				return nil
			}
		}
		problem = err
	}
	err := problem
	if o.err == nil {
		err = fmt.Errorf("rules file %s: %w", w.path, problem)
	}
	if initial {
		return err
	}
	w.stats.Failures, w.stats.LastFailure = w.stats.Failures+1, time.Now()
	w.stats.LastDuration, w.err = w.stats.LastFailure.Sub(start), err
	if w.failing && o.key == w.reported {
		return err
	}
	w.failing, w.reported = true, o.key
	msg := "sluice: rules file rejected; the rules in force are kept"
	if o.err != nil {
		msg = "sluice: rules file unreadable; the rules in force are kept"
	}
	w.log().LogAttrs(ctx, slog.LevelWarn, msg, slog.String("path", w.path), slog.String("err", problem.Error()))
	if w.onReload != nil {
		w.onReload(Change{Path: w.path}, err)
	}
	return err
}

// applyChange logs the change from the rules before to the rules after and
// passes it to OnReload's func.
func (w *Watcher) applyChange(ctx context.Context, before, after []core.Rule, initial bool) {
	c := diffRules(before, after)
	c.Path = w.path
	msg := "sluice: rules reloaded"
	if initial {
		msg = "sluice: rules loaded"
	}
	attrs := []slog.Attr{slog.String("path", w.path), slog.Int("rules", c.Rules)}
	attrs = appendNames(attrs, "added", c.Added)
	attrs = appendNames(attrs, "removed", c.Removed)
	attrs = appendNames(attrs, "changed", c.Changed)
	w.log().LogAttrs(ctx, slog.LevelInfo, msg, attrs...)
	if w.onReload != nil {
		w.onReload(c, nil)
	}
}

func (w *Watcher) log() *slog.Logger { return cmp.Or(w.logger, slog.Default()) }

// appendNames appends to attrs an attribute of at most maxLoggedNames names
// and how many more there are; none without names.
func appendNames(attrs []slog.Attr, key string, list []string) []slog.Attr {
	switch {
	case len(list) == 0:
		return attrs
	case len(list) > maxLoggedNames:
		list = append(list[:maxLoggedNames:maxLoggedNames], "(+"+strconv.Itoa(len(list)-maxLoggedNames)+" more)")
	}
	return append(attrs, slog.Any(key, list))
}

// diffRules compares two normalized rule sets by rule name.
func diffRules(before, after []core.Rule) Change {
	old := make(map[string]core.Rule, len(before))
	for _, r := range before {
		old[r.Name] = r
	}
	c := Change{Rules: len(after)}
	for _, r := range after {
		prev, ok := old[r.Name]
		delete(old, r.Name) // what is left is removed
		switch {
		case !ok:
			c.Added = append(c.Added, r.Name)
		case !sameRule(prev, r):
			c.Changed = append(c.Changed, r.Name)
		}
	}
	for _, r := range before {
		if _, removed := old[r.Name]; removed {
			c.Removed = append(c.Removed, r.Name)
		}
	}
	return c
}

// sameRule reports whether a and b have the same fields, taking no
// overrides and empty overrides as the same.
func sameRule(a, b core.Rule) bool {
	if !maps.Equal(a.Overrides, b.Overrides) {
		return false
	}
	a.Overrides, b.Overrides = nil, nil
	return reflect.DeepEqual(a, b)
}
