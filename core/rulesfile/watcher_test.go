package rulesfile_test

import (
	"context"
	"errors"
	"fmt"
	"github.com/sluicekit/sluice/core/internal/logtest"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/clock"
	"github.com/sluicekit/sluice/core/rulesfile"
)

// watchPoll is the poll interval of the watchers under test.
const watchPoll = time.Millisecond

// watched is a Guard on a fake clock whose rules a Watcher keeps in
// step with a file, and what the watcher reported.
type watched struct {
	t    *testing.T
	clk  *clock.Fake
	g    *core.Guard
	path string
	w    *rulesfile.Watcher
	log  *logtest.Recorder

	mu      sync.Mutex
	changes []rulesfile.Change
	errs    []error
}

// newWatched writes content to a rules file named name and makes a Guard
// and its watcher for it, not running yet.
func newWatched(t *testing.T, name, content string) *watched {
	t.Helper()
	x := &watched{t: t, clk: clock.NewFake(time.Hour), path: filepath.Join(t.TempDir(), name), log: &logtest.Recorder{}}
	x.write(content)
	g, err := core.New(core.WithClock(x.clk), core.WithLogger(slog.New(slog.DiscardHandler)))
	require.NoError(t, err)
	x.g = g
	x.w, err = rulesfile.NewWatcher(g, x.path,
		rulesfile.WithPollInterval(watchPoll),
		rulesfile.WithLogger(slog.New(x.log)),
		rulesfile.OnReload(x.onReload),
	)
	require.NoError(t, err)
	return x
}

// onReload records what the watcher's OnReload func is given: a change, or
// an error with a change naming only the file.
func (x *watched) onReload(c rulesfile.Change, err error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if err != nil {
		assert.Equal(x.t, rulesfile.Change{Path: x.path}, c, "the change of an error")
		x.errs = append(x.errs, err)
		return
	}
	x.changes = append(x.changes, c)
}

// run runs the watcher until the test ends, and checks that Run returns
// when its context is cancelled.
func (x *watched) run() {
	x.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- x.w.Run(ctx) }()
	x.waitSleeping()
	x.t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			assert.ErrorIs(x.t, err, context.Canceled)
		case <-time.After(10 * time.Second):
			x.t.Error("Run did not return after its context was cancelled")
		}
	})
}

// waitSleeping waits until the watcher sleeps between two polls.
func (x *watched) waitSleeping() {
	x.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(x.t, x.clk.WaitForSleepers(ctx, 1), "the watcher does not sleep")
}

// poll makes the running watcher poll n times, and returns once it has.
func (x *watched) poll(n int) {
	x.t.Helper()
	for range n {
		x.clk.Advance(watchPoll)
		x.waitSleeping()
	}
}

// write writes content to the rules file in place (truncating it first).
func (x *watched) write(content string) {
	x.t.Helper()
	require.NoError(x.t, os.WriteFile(x.path, []byte(content), 0o600))
}

// replace replaces the rules file by a new one with content, atomically.
func (x *watched) replace(content string) {
	x.t.Helper()
	tmp := x.path + ".tmp"
	require.NoError(x.t, os.WriteFile(tmp, []byte(content), 0o600))
	require.NoError(x.t, os.Rename(tmp, x.path))
}

func (x *watched) reported() ([]rulesfile.Change, []error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	return append([]rulesfile.Change(nil), x.changes...), append([]error(nil), x.errs...)
}

func (x *watched) ruleNames() []string {
	var names []string
	for _, r := range x.g.Rules() {
		names = append(names, fmt.Sprintf("%s=%d", r.Name, r.Limit))
	}
	return names
}

func (x *watched) warnings() []logtest.Record {
	var out []logtest.Record
	for _, r := range x.log.Records() {
		if r.Level == slog.LevelWarn {
			out = append(out, r)
		}
	}
	return out
}

// rulesYAML is a rules file of flow rules named name with limit limit,
// for resources "GET /name", windows of a minute.
func rulesYAML(nameLimits ...any) string {
	var b strings.Builder
	b.WriteString("rules:\n")
	for i := 0; i+1 < len(nameLimits); i += 2 {
		fmt.Fprintf(&b, "  - name: %s\n    resource: \"GET /%s\"\n    kind: flow\n    limit: %d\n    window: 1m\n",
			nameLimits[i], nameLimits[i], nameLimits[i+1])
	}
	return b.String()
}

func TestWatcherLoadsThenAppliesChangesAfterTwoPolls(t *testing.T) {
	x := newWatched(t, "rules.yaml", rulesYAML("a", 1, "b", 2, "c", 3))
	assert.Equal(t, []string{"a=1", "b=2", "c=3"}, x.ruleNames(), "NewWatcher loads the file")
	changes, errs := x.reported()
	require.Len(t, changes, 1)
	assert.Equal(t, rulesfile.Change{Path: x.path, Rules: 3, Added: []string{"a", "b", "c"}}, changes[0])
	assert.Empty(t, errs)
	recs := x.log.Records()
	require.Len(t, recs, 1)
	assert.Equal(t, slog.LevelInfo, recs[0].Level)
	assert.Equal(t, "sluice: rules loaded", recs[0].Msg)
	assert.Equal(t, "3", recs[0].Attrs["rules"])
	assert.Equal(t, x.path, recs[0].Attrs["path"])
	assert.Equal(t, "[a b c]", recs[0].Attrs["added"])
	assert.NotContains(t, recs[0].Attrs, "removed", "empty lists are left out")
	assert.NotContains(t, recs[0].Attrs, "changed")

	x.run()
	x.poll(3)
	changes, _ = x.reported()
	assert.Len(t, changes, 1, "an unchanged file applies nothing")

	x.write(rulesYAML("a", 1, "b", 20, "d", 4))
	x.poll(1)
	assert.Equal(t, []string{"a=1", "b=2", "c=3"}, x.ruleNames(), "a version seen by one poll does not apply yet")
	x.poll(1)
	assert.Equal(t, []string{"a=1", "b=20", "d=4"}, x.ruleNames(), "a version seen by two polls applies")
	changes, errs = x.reported()
	require.Len(t, changes, 2)
	assert.Equal(t, rulesfile.Change{Path: x.path, Rules: 3, Added: []string{"d"}, Removed: []string{"c"}, Changed: []string{"b"}}, changes[1])
	assert.Empty(t, errs)
	recs = x.log.Records()
	require.Len(t, recs, 2)
	assert.Equal(t, slog.LevelInfo, recs[1].Level)
	assert.Equal(t, "sluice: rules reloaded", recs[1].Msg)
	assert.Equal(t, "[d]", recs[1].Attrs["added"])
	assert.Equal(t, "[c]", recs[1].Attrs["removed"])
	assert.Equal(t, "[b]", recs[1].Attrs["changed"])
	assert.NoError(t, x.w.Stats().Err)

	x.poll(5)
	changes, _ = x.reported()
	assert.Len(t, changes, 2, "a version applies once")
}

func TestWatcherLogsAtMostTenNamesPerList(t *testing.T) {
	var many []any
	for i := range 25 {
		many = append(many, fmt.Sprintf("r%02d", i), 1)
	}
	x := newWatched(t, "rules.yaml", rulesYAML(many...))
	changes, _ := x.reported()
	require.Len(t, changes, 1)
	assert.Len(t, changes[0].Added, 25, "the change names every rule")
	recs := x.log.Records()
	require.Len(t, recs, 1)
	assert.Equal(t, "[r00 r01 r02 r03 r04 r05 r06 r07 r08 r09 (+15 more)]", recs[0].Attrs["added"])
}

// TestWatcherUnderLoad rewrites the rules file while goroutines enter
// through the Guard without pause: no Enter fails but by a limit, a
// changed limit switches without resetting its count, the counts of the
// unchanged rules (flow, hotspot, concurrency) carry over, and a broken
// file is reported and ignored.
func TestWatcherUnderLoad(t *testing.T) {
	const rulesV1 = `rules:
  - name: a-rate
    resource: "GET /a"
    kind: flow
    limit: 10
    window: 1m
  - name: b-per-user
    resource: "GET /b"
    kind: hotspot
    param: "header:X-User-ID"
    limit: 5
    window: 1m
  - name: c-inflight
    resource: "GET /c"
    kind: concurrency
    limit: 1
`
	x := newWatched(t, "rules.yaml", rulesV1)
	x.run()
	ctx := context.Background()

	// Each worker counts its own blocks: once a worker has been blocked
	// after settle began, its earlier admitted.Add has happened.
	const workers = 4
	var admitted atomic.Int64
	var blocked [workers]atomic.Int64
	var otherErrs sync.Map
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				e, err := x.g.Enter(ctx, "GET /a")
				switch {
				case err == nil:
					admitted.Add(1)
					e.Exit(nil)
				case errors.Is(err, core.ErrBlocked):
					blocked[w].Add(1)
				default:
					otherErrs.Store(err.Error(), true)
				}
			}
		})
	}
	defer func() {
		close(stop)
		wg.Wait()
		otherErrs.Range(func(k, _ any) bool {
			t.Errorf("Enter failed other than by a limit: %v", k)
			return true
		})
	}()
	// settle waits until every worker has been blocked n more times, then
	// returns the number of requests admitted so far.
	settle := func(n int64) int64 {
		t.Helper()
		var target [workers]int64
		for w := range workers {
			target[w] = blocked[w].Load() + n
		}
		require.Eventually(t, func() bool {
			for w := range workers {
				if blocked[w].Load() < target[w] {
					return false
				}
			}
			return true
		}, 20*time.Second, time.Millisecond)
		return admitted.Load()
	}
	alice := core.WithParams(core.ParamMap{"header:X-User-ID": {"alice"}})
	enterN := func(resource string, n int, opts ...core.EnterOption) (passed int) {
		for range n {
			e, err := x.g.Enter(ctx, resource, opts...)
			if err == nil {
				passed++
				e.Exit(nil)
			} else {
				require.ErrorIs(t, err, core.ErrBlocked)
			}
		}
		return passed
	}

	require.Equal(t, int64(10), settle(200), "limit 10 per minute")
	require.Equal(t, 4, enterN("GET /b", 4, alice), "alice is one request short of her limit")
	held, err := x.g.Enter(ctx, "GET /c")
	require.NoError(t, err)

	// a-rate goes to 25: 15 more pass in the same window, not 25.
	x.write(strings.Replace(rulesV1, "limit: 10", "limit: 25", 1))
	x.poll(2)
	require.Eventually(t, func() bool { return admitted.Load() == 25 }, 20*time.Second, time.Millisecond)
	assert.Equal(t, int64(25), settle(200), "the new limit applies with the count carried over")
	changes, _ := x.reported()
	require.Len(t, changes, 2)
	assert.Equal(t, []string{"a-rate"}, changes[1].Changed)
	assert.Equal(t, 1, enterN("GET /b", 3, alice), "the unchanged hotspot rule kept alice's count")
	_, err = x.g.Enter(ctx, "GET /c")
	require.ErrorIs(t, err, core.ErrBlocked, "the unchanged concurrency rule kept the request in flight")
	held.Exit(nil)
	require.Equal(t, 1, enterN("GET /c", 1))

	// A broken file is reported once and changes nothing.
	broken := strings.Replace(rulesV1, "limit: 10", "limit: 1000", 1)
	broken = strings.Replace(broken, "limit: 5", "limit: -5", 1)
	x.write(broken)
	x.poll(2)
	_, errs := x.reported()
	require.Len(t, errs, 1)
	var rerr *core.RulesError
	require.ErrorAs(t, errs[0], &rerr)
	require.Len(t, rerr.Problems, 1)
	p := rerr.Problems[0]
	assert.Equal(t, 1, p.Index)
	assert.Equal(t, "b-per-user", p.Name)
	assert.Equal(t, "limit", p.Field)
	assert.Contains(t, errs[0].Error(), x.path)
	assert.Contains(t, errs[0].Error(), "rules[1] (b-per-user): line 11: limit must be >= 0, got -5")
	assert.Equal(t, int64(25), settle(200), "the rules in force stay")
	x.poll(5)
	_, errs = x.reported()
	assert.Len(t, errs, 1, "reported once")
	require.Len(t, x.warnings(), 1)
	assert.Equal(t, "sluice: rules file rejected; the rules in force are kept", x.warnings()[0].Msg)
	assert.Contains(t, x.warnings()[0].Attrs["err"], "limit must be >= 0, got -5")
	assert.ErrorAs(t, x.w.Stats().Err, &rerr)

	// The fixed file applies: a-rate at 40.
	x.write(strings.Replace(rulesV1, "limit: 10", "limit: 40", 1))
	x.poll(2)
	require.Eventually(t, func() bool { return admitted.Load() == 40 }, 20*time.Second, time.Millisecond)
	assert.Equal(t, int64(40), settle(200))
	assert.NoError(t, x.w.Stats().Err)

	// In a fresh window, 40 pass.
	before := admitted.Load()
	x.clk.Advance(2 * time.Minute)
	x.waitSleeping()
	require.Eventually(t, func() bool { return admitted.Load()-before == 40 }, 20*time.Second, time.Millisecond, "%d", admitted.Load()-before)
	assert.Equal(t, int64(40), settle(200)-before)
}

func TestWatcherReportsEachBrokenVersionOnce(t *testing.T) {
	good := rulesYAML("a", 1)
	x := newWatched(t, "rules.yaml", good)
	x.run()

	x.write("rules:\n  - name: a\n    resource: [\n")
	x.poll(1)
	_, errs := x.reported()
	assert.Empty(t, errs, "a version seen by one poll is not reported")
	assert.NoError(t, x.w.Stats().Err)
	x.poll(4)
	_, errs = x.reported()
	require.Len(t, errs, 1)
	var rerr *core.RulesError
	require.ErrorAs(t, errs[0], &rerr)
	assert.Contains(t, errs[0].Error(), "yaml")
	assert.Equal(t, []string{"a=1"}, x.ruleNames())

	// Another broken version is reported too.
	x.write(rulesYAML("a", 1) + "    algoritm: token-bucket\n")
	x.poll(4)
	_, errs = x.reported()
	require.Len(t, errs, 2)
	require.ErrorAs(t, errs[1], &rerr)
	assert.Equal(t, 7, rerr.Problems[0].Line)
	assert.Contains(t, rerr.Problems[0].Msg, `unknown field "algoritm"`)

	// The file goes back to the rules in force: nothing to apply, the
	// problem is over, and the first broken version is reported again
	// when it comes back.
	x.write(good)
	x.poll(2)
	assert.NoError(t, x.w.Stats().Err)
	changes, _ := x.reported()
	assert.Len(t, changes, 1, "nothing applied")
	recs := x.log.Records()
	assert.Equal(t, "sluice: rules file is back to the rules in force", recs[len(recs)-1].Msg)
	x.write("rules:\n  - name: a\n    resource: [\n")
	x.poll(2)
	_, errs = x.reported()
	assert.Len(t, errs, 3)
	assert.Len(t, x.warnings(), 3)
}

// TestWatcherIgnoresPartialWrites catches a file halfway through
// in-place writes: empty (a valid file with no rules), then with its first
// rule only (valid too), then complete. Only the complete file applies.
func TestWatcherIgnoresPartialWrites(t *testing.T) {
	x := newWatched(t, "rules.yaml", rulesYAML("a", 1, "b", 2))
	x.run()
	next := rulesYAML("a", 10, "b", 20)

	x.write("")
	x.poll(1)
	x.write(next[:strings.Index(next, "  - name: b")])
	x.poll(1)
	x.write(next[:len(next)-5]) // "limit: 20\n    window: 1m" cut in the middle
	x.poll(1)
	x.write(next)
	x.poll(1)
	assert.Equal(t, []string{"a=1", "b=2"}, x.ruleNames(), "no partial version applied")
	x.poll(1)
	assert.Equal(t, []string{"a=10", "b=20"}, x.ruleNames())
	changes, errs := x.reported()
	require.Len(t, changes, 2, "one change: the complete file")
	assert.Equal(t, []string{"a", "b"}, changes[1].Changed)
	assert.Empty(t, errs, "no partial version reported")
}

func TestWatcherSurvivesDeletionAndRecreation(t *testing.T) {
	x := newWatched(t, "rules.yaml", rulesYAML("a", 1))
	x.run()

	require.NoError(t, os.Remove(x.path))
	x.poll(1)
	_, errs := x.reported()
	assert.Empty(t, errs, "a file missing for one poll is not reported")
	x.poll(4)
	_, errs = x.reported()
	require.Len(t, errs, 1, "reported once")
	assert.ErrorIs(t, errs[0], fs.ErrNotExist)
	assert.ErrorIs(t, x.w.Stats().Err, fs.ErrNotExist)
	assert.Equal(t, []string{"a=1"}, x.ruleNames(), "the rules in force stay")
	require.Len(t, x.warnings(), 1)
	assert.Equal(t, "sluice: rules file unreadable; the rules in force are kept", x.warnings()[0].Msg)

	// Recreated as it was: nothing to apply.
	x.write(rulesYAML("a", 1))
	x.poll(2)
	assert.NoError(t, x.w.Stats().Err)
	changes, _ := x.reported()
	assert.Len(t, changes, 1)

	// Deleted and recreated with new rules: they apply.
	require.NoError(t, os.Remove(x.path))
	x.poll(3)
	x.write(rulesYAML("a", 5))
	x.poll(2)
	assert.Equal(t, []string{"a=5"}, x.ruleNames())
	assert.NoError(t, x.w.Stats().Err)
	_, errs = x.reported()
	assert.Len(t, errs, 2)

	// Replaced by a rename, as editors and deployment tools do.
	x.replace(rulesYAML("a", 7))
	x.poll(2)
	assert.Equal(t, []string{"a=7"}, x.ruleNames())
}

func TestWatcherNoticesRewritesThatKeepSizeAndTime(t *testing.T) {
	x := newWatched(t, "rules.yaml", rulesYAML("a", 1))
	x.run()
	info, err := os.Stat(x.path)
	require.NoError(t, err)

	// Same size, and the modification time put back: the file was
	// modified recently, so the watcher reads it anyway.
	x.write(rulesYAML("a", 2))
	require.NoError(t, os.Chtimes(x.path, time.Time{}, info.ModTime()))
	x.poll(2)
	assert.Equal(t, []string{"a=2"}, x.ruleNames())

	// A file renamed over it keeps the old file's size and an old
	// modification time (mv keeps it): it is another file, so it is read.
	old := time.Now().Add(-time.Hour)
	require.NoError(t, os.Chtimes(x.path, time.Time{}, old))
	x.poll(2)
	tmp := x.path + ".tmp"
	require.NoError(t, os.WriteFile(tmp, []byte(rulesYAML("a", 3)), 0o600))
	require.NoError(t, os.Chtimes(tmp, time.Time{}, old))
	require.NoError(t, os.Rename(tmp, x.path))
	x.poll(2)
	assert.Equal(t, []string{"a=3"}, x.ruleNames())

	// A file that was not modified for longer than the file system's
	// time granularity is not read again while its size and time stay:
	// an in-place rewrite that restores both goes unnoticed (documented),
	// until the file's time changes.
	x.poll(1)
	x.write(rulesYAML("a", 4))
	require.NoError(t, os.Chtimes(x.path, time.Time{}, old))
	x.poll(3)
	assert.Equal(t, []string{"a=3"}, x.ruleNames())
	require.NoError(t, os.Chtimes(x.path, time.Time{}, time.Now()))
	x.poll(2)
	assert.Equal(t, []string{"a=4"}, x.ruleNames())
}

func TestWatcherReloadAppliesAtOnce(t *testing.T) {
	x := newWatched(t, "rules.json", `{"rules": [{"name": "a", "resource": "GET /a", "kind": "flow", "limit": 1}]}`)
	assert.Equal(t, []string{"a=1"}, x.ruleNames(), "a .json file is JSON")

	require.NoError(t, x.w.Reload(), "unchanged")
	changes, _ := x.reported()
	assert.Len(t, changes, 1)

	x.write(`{"rules": [{"name": "a", "resource": "GET /a", "kind": "flow", "limit": 2}]}`)
	require.NoError(t, x.w.Reload())
	assert.Equal(t, []string{"a=2"}, x.ruleNames(), "applied without a second look")

	x.write(`{"rules": [{"name": "a", "resource": "GET /a", "kind": "flow", "limit": -1}]}`)
	err := x.w.Reload()
	var rerr *core.RulesError
	require.ErrorAs(t, err, &rerr)
	assert.Equal(t, "limit", rerr.Problems[0].Field)
	require.ErrorAs(t, x.w.Reload(), &rerr, "still broken")
	_, errs := x.reported()
	assert.Len(t, errs, 1, "reported once")
	assert.Equal(t, []string{"a=2"}, x.ruleNames())
}

func TestWatcherReportsRulesTheGuardRefuses(t *testing.T) {
	x := newWatched(t, "rules.yaml", rulesYAML("a", 1))
	x.write(rulesYAML("a", 1) + "    store: nowhere\n    algorithm: sliding-counter\n")
	err := x.w.Reload()
	require.Error(t, err)
	var rerr *core.RulesError
	require.ErrorAs(t, err, &rerr)
	assert.Equal(t, "a", rerr.Problems[0].Name)
	assert.Contains(t, err.Error(), "nowhere")
	assert.Equal(t, []string{"a=1"}, x.ruleNames())
}

func TestWatcherRunStopsWithItsContext(t *testing.T) {
	x := newWatched(t, "rules.yaml", rulesYAML("a", 1))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- x.w.Run(ctx) }()
	x.waitSleeping()
	require.Error(t, x.w.Run(ctx), "a second Run at once is refused")
	cancel()
	select {
	case err := <-done:
		require.ErrorIs(t, err, context.Canceled)
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return")
	}
	assert.Error(t, x.clk.WaitForSleepers(ctx, 1), "Run sleeps no more") // ctx is done: no wait

	// It can run again, and stops at once with a done context.
	require.ErrorIs(t, x.w.Run(ctx), context.Canceled)
}

func TestNewWatcherErrors(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "rules.yaml")
	require.NoError(t, os.WriteFile(good, []byte(rulesYAML("a", 1)), 0o600))
	bad := filepath.Join(dir, "bad.yaml")
	require.NoError(t, os.WriteFile(bad, []byte("rules:\n  - name: x\n    resource: x\n    kind: flow\n    limit: -5\n"), 0o600))
	g, err := core.New(core.WithRules(core.Rule{Name: "keep", Resource: "*", Kind: core.KindFlow, Limit: 1}))
	require.NoError(t, err)
	defer g.Close()

	for _, tc := range []struct {
		name string
		g    *core.Guard
		path string
		opts []rulesfile.WatchOption
		want string
	}{
		{"nil guard", nil, good, nil, "guard is nil"},
		{"empty path", g, "", nil, "path is empty"},
		{"zero interval", g, good, []rulesfile.WatchOption{rulesfile.WithPollInterval(0)}, "WithPollInterval: interval must be > 0, got 0s"},
		{"negative interval", g, good, []rulesfile.WatchOption{rulesfile.WithPollInterval(-time.Second)}, "WithPollInterval: interval must be > 0, got -1s"},
		{"nil logger", g, good, []rulesfile.WatchOption{rulesfile.WithLogger(nil)}, "WithLogger: logger is nil"},
		{"nil OnReload", g, good, []rulesfile.WatchOption{rulesfile.OnReload(nil)}, "OnReload: func is nil"},
		{"missing file", g, filepath.Join(dir, "nope.yaml"), nil, "nope.yaml"},
		{"bad file", g, bad, nil, "rules file " + bad + ": rules[0] (x): line 5: limit must be >= 0, got -5"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, err := rulesfile.NewWatcher(tc.g, tc.path, append(tc.opts, rulesfile.WithLogger(slog.New(slog.DiscardHandler)))...)
			require.Error(t, err)
			assert.Nil(t, w)
			assert.Contains(t, err.Error(), tc.want)
			require.Len(t, g.Rules(), 1)
			assert.Equal(t, "keep", g.Rules()[0].Name, "the rules in force stay")
		})
	}
}

// BenchmarkWatcherPoll measures a look at an unchanged rules file of
// four rules: read and hashed (modified within 2s of the last read), or
// only stat'ed (modified long before).
func BenchmarkWatcherPoll(b *testing.B) {
	for _, tc := range []struct {
		name string
		old  bool
	}{{"Read", false}, {"StatOnly", true}} {
		b.Run(tc.name, func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "rules.yaml")
			require.NoError(b, os.WriteFile(path, []byte(rulesYAML("a", 1, "b", 2, "c", 3, "d", 4)), 0o600))
			if tc.old {
				require.NoError(b, os.Chtimes(path, time.Time{}, time.Now().Add(-time.Hour)))
			}
			g, err := core.New()
			require.NoError(b, err)
			defer g.Close()
			w, err := rulesfile.NewWatcher(g, path, rulesfile.WithLogger(slog.New(slog.DiscardHandler)))
			require.NoError(b, err)
			b.ReportAllocs()
			for b.Loop() {
				if err := w.Reload(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestWatcherKeepsRulesWhenTheFileIsEmptyOrCut runs a Guard made
// with NewGuard, whose file a Watcher keeps in step: the file is
// rewritten on disk empty, with a bare "rules:", cut in the middle of a
// value, cut after a key, and cut before a limit. Each version is refused
// with a warning naming the file and the problem, and requests through
// Enter show the limit of 5 still in force; "rules: []" then removes it.
func TestWatcherKeepsRulesWhenTheFileIsEmptyOrCut(t *testing.T) {
	const rules = "rules:\n  - name: five\n    resource: GET /a\n    kind: flow\n    limit: 5\n    window: 1m\n  - name: inflight\n    resource: GET /b\n    kind: concurrency\n    limit: 100\n"
	x := &watched{t: t, clk: clock.NewFake(time.Hour), path: filepath.Join(t.TempDir(), "rules.yaml"), log: &logtest.Recorder{}}
	x.write(rules)
	g, err := rulesfile.NewGuard(x.path, core.WithClock(x.clk), core.WithLogger(slog.New(slog.DiscardHandler)))
	require.NoError(t, err)
	x.g = g
	x.w, err = rulesfile.NewWatcher(g, x.path, rulesfile.WithPollInterval(watchPoll), rulesfile.WithLogger(slog.New(x.log)),
		rulesfile.OnReload(x.onReload))
	require.NoError(t, err)
	x.run()
	ctx := context.Background()
	// pass enters n requests in a fresh window and returns how many passed.
	pass := func(n int) (passed int) {
		t.Helper()
		x.clk.Advance(time.Minute)
		x.waitSleeping()
		for range n {
			e, err := g.Enter(ctx, "GET /a")
			if err != nil {
				require.ErrorIs(t, err, core.ErrBlocked)
				continue
			}
			passed++
			e.Exit(nil)
		}
		return passed
	}
	require.Equal(t, 5, pass(8))

	cut := strings.Index(rules, "  - name: inflight")
	for i, tc := range []struct{ content, problem string }{
		{"", `rules is missing: the file is empty (it may have been cut short); a rules file with no rules says so with "rules: []"`},
		{"rules:\n", `line 1: rules must be a list of rules, got null (the file may have been cut short); a rules file with no rules says so with "rules: []"`},
		{strings.Replace(rules, "limit: 5\n    window: 1m\n", "limit: 500\n", 1)[:strings.Index(rules, "limit: 5")+len("limit: 5")],
			`line 5: the file ends without a line break after "    limit: 5": it may have been cut short in the middle of a value; end it with a line break`},
		{rules[:strings.Index(rules, " 1m")] + "\n", `rules[0] (five): line 6: window has no value (the file may have been cut short); give one, or remove the key`},
		{rules[:strings.Index(rules, "    limit: 5")], `rules[0] (five): line 2: limit is required for kind flow (limit: 0 blocks every request)`},
		{rules[:cut] + "  - name: inflight\n    resource: GET /b\n    kind: concurrency\n", `rules[1] (inflight): line 7: limit is required for kind concurrency (limit: 0 blocks every request)`},
	} {
		x.write(tc.content)
		x.poll(2)
		_, errs := x.reported()
		require.Len(t, errs, i+1, "%q is refused", tc.content)
		assert.Equal(t, "rules file "+x.path+": "+tc.problem, errs[i].Error())
		warnings := x.warnings()
		require.Len(t, warnings, i+1, "%q is refused with a warning", tc.content)
		assert.Equal(t, "sluice: rules file rejected; the rules in force are kept", warnings[i].Msg)
		assert.Equal(t, x.path, warnings[i].Attrs["path"])
		assert.Equal(t, tc.problem, warnings[i].Attrs["err"])
		assert.Equal(t, 5, pass(8), "%q: the limit of 5 stays", tc.content)
		assert.Len(t, g.Rules(), 2)
	}

	x.write("rules: []\n")
	x.poll(2)
	assert.Empty(t, g.Rules(), "a file that says it has no rules applies")
	assert.NoError(t, x.w.Stats().Err)
	assert.Equal(t, 8, pass(8))
	assert.Len(t, x.warnings(), 6)
}
