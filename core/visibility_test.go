package core_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/clock"
	"github.com/sluicekit/sluice/core/store"
)

// quiet makes a Guard log nothing.
var quiet = core.WithLogger(slog.New(slog.DiscardHandler))

// quietGuard is newGuard logging nothing.
func quietGuard(t testing.TB, rules ...core.Rule) (*core.Guard, *clock.Fake) {
	t.Helper()
	fc := clock.NewFake(10 * time.Second)
	g, err := core.New(core.WithClock(fc), quiet, core.WithRules(rules...))
	require.NoError(t, err)
	return g, fc
}

// ruleStats returns the statistics of the rule called name in g's snapshot.
func ruleStats(t *testing.T, g *core.Guard, name string) core.RuleStats {
	t.Helper()
	for _, r := range g.Snapshot().Rules {
		if r.Rule.Name == name {
			return r
		}
	}
	t.Fatalf("no rule %q", name)
	return core.RuleStats{}
}

// enterN enters resource n times and exits what passed; it returns the
// number that passed.
func enterN(g *core.Guard, resource string, n int, opts ...core.EnterOption) int {
	passed := 0
	for range n {
		if e, err := g.Enter(context.Background(), resource, opts...); err == nil {
			passed++
			e.Exit(nil)
		}
	}
	return passed
}

func TestRuleEvaluatedCountsEveryRequestItDecides(t *testing.T) {
	g, _ := quietGuard(t,
		core.Rule{Name: "tight", Resource: "GET /a", Kind: core.KindFlow, Limit: 2},
		core.Rule{Name: "loose", Resource: "GET /*", Kind: core.KindFlow, Limit: 100},
		core.Rule{Name: "conc", Resource: "GET /b", Kind: core.KindConcurrency, Limit: 5},
		core.Rule{Name: "users", Resource: "GET /b", Kind: core.KindHotspot, Param: "header:X-User", Limit: 1},
		core.Rule{Name: "nowhere", Resource: "GET /nowhere", Kind: core.KindFlow, Limit: 1},
	)
	assert.Equal(t, 2, enterN(g, "GET /a", 5))
	// Without the param the hotspot rule lets them pass: evaluated.
	assert.Equal(t, 3, enterN(g, "GET /b", 3))
	user := core.WithParams(core.ParamMap{"header:X-User": {"u1"}})
	assert.Equal(t, 1, enterN(g, "GET /b", 4, user))
	assert.Equal(t, 2, enterN(g, "GET /c", 2, core.WithCount(3))) // permits

	tight := ruleStats(t, g, "tight")
	assert.Equal(t, []string{"GET /a"}, tight.Resources)
	assert.Equal(t, int64(5), tight.Evaluated)
	assert.Equal(t, int64(3), tight.BlockedTotal)
	// The rule after the one that blocked is asked too.
	loose := ruleStats(t, g, "loose")
	assert.Equal(t, []string{"GET /a", "GET /b", "GET /c"}, loose.Resources)
	assert.Equal(t, int64(5+3+4+6), loose.Evaluated)
	assert.Equal(t, int64(7), ruleStats(t, g, "conc").Evaluated)
	assert.Equal(t, int64(7), ruleStats(t, g, "users").Evaluated)
	nowhere := ruleStats(t, g, "nowhere")
	assert.Empty(t, nowhere.Resources)
	assert.Zero(t, nowhere.Evaluated)
}

func TestRuleEvaluatedSkipsStoreRulesAfterABlock(t *testing.T) {
	fc := clock.NewFake(10 * time.Second)
	m, err := store.NewMemory(fc, 0)
	require.NoError(t, err)
	g, err := core.New(core.WithClock(fc), quiet, core.WithStore("shared", m), core.WithRules(
		core.Rule{Name: "local", Resource: "GET /a", Kind: core.KindFlow, Limit: 2},
		core.Rule{Name: "global", Resource: "GET /a", Kind: core.KindFlow, Limit: 100, Store: "shared"},
		core.Rule{Name: "after", Resource: "GET /a", Kind: core.KindFlow, Limit: 100},
	))
	require.NoError(t, err)
	assert.Equal(t, 2, enterN(g, "GET /a", 5))
	assert.Equal(t, int64(5), ruleStats(t, g, "local").Evaluated)
	assert.Equal(t, int64(2), ruleStats(t, g, "global").Evaluated, "a store's rule is not asked after a block")
	assert.Equal(t, int64(5), ruleStats(t, g, "after").Evaluated)
}

func TestRuleEvaluatedCountsCancelledWaits(t *testing.T) {
	g, fc := quietGuard(t, core.Rule{Name: "paced", Resource: "GET /a", Kind: core.KindFlow, Limit: 1, Window: time.Second,
		Algorithm: core.AlgorithmLeakyBucket, MaxWait: 10 * time.Second})
	assert.Equal(t, 1, enterN(g, "GET /a", 1))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() {
		_, err := g.Enter(ctx, "GET /a")
		done <- err
	}()
	require.NoError(t, fc.WaitForSleepers(context.Background(), 1))
	cancel()
	require.ErrorIs(t, <-done, context.Canceled)
	assert.Equal(t, int64(2), ruleStats(t, g, "paced").Evaluated)
}

func TestRuleEvaluatedAcrossReloadsAndOverflow(t *testing.T) {
	fc := clock.NewFake(10 * time.Second)
	g, err := core.New(core.WithClock(fc), quiet, core.WithMaxResources(1),
		core.WithRules(core.Rule{Name: "all", Resource: "GET /*", Kind: core.KindFlow, Limit: 1000}))
	require.NoError(t, err)
	enterN(g, "GET /a", 3)
	enterN(g, "GET /b", 2) // beyond the bound: counted under the overflow resource
	all := ruleStats(t, g, "all")
	assert.Equal(t, []string{"GET /a", core.OverflowResource}, all.Resources)
	assert.Equal(t, int64(5), all.Evaluated)

	// "all" keeps its name, kind and resource: its counts carry over. "a"
	// is new: the requests before it do not count.
	require.NoError(t, g.SetRules([]core.Rule{
		{Name: "all", Resource: "GET /*", Kind: core.KindFlow, Limit: 500},
		{Name: "a", Resource: "GET /a", Kind: core.KindFlow, Limit: 1000},
	}))
	enterN(g, "GET /a", 4)
	assert.Equal(t, int64(9), ruleStats(t, g, "all").Evaluated)
	a := ruleStats(t, g, "a")
	assert.Equal(t, int64(4), a.Evaluated)
	assert.Equal(t, []string{"GET /a"}, a.Resources)
}

// TestRuleEvaluatedExactUnderConcurrency checks that Evaluated, which adds
// up the counts of the resources and those of the rules, counts every
// request once, and never decreases between snapshots.
func TestRuleEvaluatedExactUnderConcurrency(t *testing.T) {
	g, _ := quietGuard(t,
		core.Rule{Name: "tight", Resource: "GET /a", Kind: core.KindFlow, Limit: 50},
		core.Rule{Name: "conc", Resource: "GET /*", Kind: core.KindConcurrency, Limit: 3},
	)
	const workers, each = 8, 2000
	var wg sync.WaitGroup
	var stop atomic.Bool
	var last atomic.Int64
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !stop.Load() {
			n := ruleStats(t, g, "conc").Evaluated
			if n < last.Load() {
				t.Errorf("Evaluated went from %d down to %d", last.Load(), n)
				return
			}
			last.Store(n)
		}
	}()
	var work sync.WaitGroup
	for w := range workers {
		work.Add(1)
		go func() {
			defer work.Done()
			res := "GET /a"
			if w%2 == 1 {
				res = "GET /b"
			}
			enterN(g, res, each)
		}()
	}
	work.Wait()
	stop.Store(true)
	wg.Wait()
	assert.Equal(t, int64(workers*each), ruleStats(t, g, "conc").Evaluated)
	assert.Equal(t, int64(workers/2*each), ruleStats(t, g, "tight").Evaluated)
}

// logBuffer returns a logger writing text records to a buffer safe for
// concurrent use, and a function returning what was written.
func logBuffer() (*slog.Logger, func() string) {
	var mu sync.Mutex
	var buf bytes.Buffer
	h := slog.NewTextHandler(writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return buf.Write(p)
	}), &slog.HandlerOptions{Level: slog.LevelDebug})
	return slog.New(h), func() string {
		mu.Lock()
		defer mu.Unlock()
		return buf.String()
	}
}

// waitLogged waits until logged has n records containing s: the Guard logs
// from a goroutine of its own.
func waitLogged(t *testing.T, logged func() string, s string, n int) {
	t.Helper()
	require.Eventually(t, func() bool { return strings.Count(logged(), s) >= n }, time.Minute, time.Millisecond, "%d records with %q", n, s)
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

func TestUnmatchedRuleWarnedOnceOnTheGuardsClock(t *testing.T) {
	fc := clock.NewFake(10 * time.Second)
	log, logged := logBuffer()
	rules := []core.Rule{
		{Name: "used", Resource: "GET /a", Kind: core.KindFlow, Limit: 10},
		{Name: "typo", Resource: "GET /itmes/{id}", Kind: core.KindFlow, Limit: 10},
	}
	g, err := core.New(core.WithClock(fc), core.WithLogger(log), core.WithUnmatchedAfter(time.Minute), core.WithRules(rules...))
	require.NoError(t, err)
	enterN(g, "GET /a", 1)
	fc.Advance(time.Minute - time.Nanosecond)
	assert.False(t, ruleStats(t, g, "typo").Unmatched)
	fc.Advance(time.Nanosecond)
	assert.True(t, ruleStats(t, g, "typo").Unmatched)
	assert.False(t, ruleStats(t, g, "used").Unmatched)
	waitLogged(t, logged, "matched no request", 1)

	// Unchanged by a reload, it is not warned about again; changed, its
	// time starts again.
	fc.Advance(10 * time.Minute)
	require.NoError(t, g.SetRules(rules))
	assert.True(t, ruleStats(t, g, "typo").Unmatched)
	fc.Advance(10 * time.Minute)
	rules[1].Limit = 20
	require.NoError(t, g.SetRules(rules))
	assert.False(t, ruleStats(t, g, "typo").Unmatched)
	fc.Advance(time.Minute)
	assert.True(t, ruleStats(t, g, "typo").Unmatched)
	waitLogged(t, logged, "matched no request", 2)
	fc.Advance(time.Hour)
	require.NoError(t, g.Close())

	out := logged()
	assert.Equal(t, 2, strings.Count(out, "matched no request"), out)
	assert.Equal(t, 2, strings.Count(out, `level=WARN msg="sluice: rule matched no request`), out)
	assert.Contains(t, out, `index=1 rule=typo resource="GET /itmes/{id}" over=1m0s`)
	assert.NotContains(t, out, "rule=used")
}

func TestUnmatchedAfterOption(t *testing.T) {
	_, err := core.New(core.WithUnmatchedAfter(-time.Second))
	assert.ErrorContains(t, err, "WithUnmatchedAfter: must be >= 0 (0 turns the warning off), got -1s")

	fc := clock.NewFake(0)
	log, logged := logBuffer()
	g, err := core.New(core.WithClock(fc), core.WithLogger(log), core.WithUnmatchedAfter(0),
		core.WithRules(core.Rule{Name: "typo", Resource: "GET /x", Kind: core.KindFlow, Limit: 1}))
	require.NoError(t, err)
	fc.Advance(time.Hour)
	assert.False(t, ruleStats(t, g, "typo").Unmatched)
	require.NoError(t, g.Close())
	assert.Empty(t, logged())

	// The default: five minutes.
	g, err = core.New(core.WithClock(fc), core.WithLogger(log),
		core.WithRules(core.Rule{Name: "typo", Resource: "GET /x", Kind: core.KindFlow, Limit: 1}))
	require.NoError(t, err)
	expired, cancelExpired := context.WithCancel(context.Background())
	cancelExpired()
	assert.Error(t, fc.WaitForSleepers(expired, 1), "no sleeper on the Guard's clock")
	fc.Advance(5*time.Minute - time.Nanosecond)
	assert.False(t, ruleStats(t, g, "typo").Unmatched)
	fc.Advance(time.Nanosecond)
	require.NoError(t, g.Close())
	assert.Contains(t, logged(), "over=5m0s", "Close lets a warning that is due out")
}

func TestCheckRoutesWarnsAboutRulesMatchingNoRoute(t *testing.T) {
	log, logged := logBuffer()
	g, err := core.New(core.WithLogger(log), core.WithRules(
		core.Rule{Name: "items", Resource: "GET /items/{id}", Kind: core.KindFlow, Limit: 1},
		core.Rule{Name: "any-method", Resource: "/static/*", Kind: core.KindFlow, Limit: 1},
		core.Rule{Name: "typo", Resource: "GET /itmes/{id}", Kind: core.KindFlow, Limit: 1},
		core.Rule{Name: "wrong-method", Resource: "POST /items/{id}", Kind: core.KindFlow, Limit: 1},
		core.Rule{Name: "grpc", Resource: "/pkg.Service/Method", Kind: core.KindFlow, Limit: 1},
		core.Rule{Name: "custom", Resource: "checkout", Kind: core.KindFlow, Limit: 1},
	))
	require.NoError(t, err)
	defer g.Close()
	g.CheckRoutes()
	assert.Empty(t, logged(), "no routes known: nothing checked")
	g.AddRoutes("GET /items/{id}")
	g.AddRoutes("/static/{path...}")
	assert.Empty(t, logged(), "AddRoutes does not check")
	g.CheckRoutes()
	out := logged()
	assert.Equal(t, 1, strings.Count(out, "level=WARN"), out)
	assert.Contains(t, out, `rules[2] (typo): \"GET /itmes/{id}\"`)
	assert.Contains(t, out, `rules[3] (wrong-method): \"POST /items/{id}\"`)
	for _, name := range []string{"(items)", "(any-method)", "(grpc)", "(custom)"} {
		assert.NotContains(t, out, name)
	}
	// Once per rule per rule set: more routes, or the same again, add no
	// warning for it; a new rule set is checked afresh.
	g.AddRoutes("GET /other")
	g.CheckRoutes()
	g.CheckRoutes()
	assert.Equal(t, out, logged())
	require.NoError(t, g.SetRules(g.Rules()))
	assert.Equal(t, 2, strings.Count(logged(), "level=WARN"))
	g.AddRoutes("POST /items/{id}")
	require.NoError(t, g.SetRules(g.Rules()))
	g.CheckRoutes() // nothing new
	assert.Equal(t, 3, strings.Count(logged(), "level=WARN"))
	assert.NotContains(t, logged()[len(out)*2:], "wrong-method")
}

func TestUnmatchedRuleOnTheSystemClock(t *testing.T) {
	log, logged := logBuffer()
	g, err := core.New(core.WithLogger(log), core.WithUnmatchedAfter(20*time.Millisecond),
		core.WithRules(core.Rule{Name: "typo", Resource: "GET /itmes", Kind: core.KindFlow, Limit: 1}))
	require.NoError(t, err)
	waitLogged(t, logged, "rule=typo", 1)
	require.NoError(t, g.Close())
	assert.True(t, ruleStats(t, g, "typo").Unmatched)
}
