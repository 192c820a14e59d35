package core_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/clock"
	"github.com/sluicekit/sluice/core/internal/sysclock"
	"github.com/sluicekit/sluice/core/internal/system"
)

// fakeSystem is a core.SystemSource whose readings a test sets.
type fakeSystem struct {
	mu        sync.Mutex
	cpu, load float64
	err       error
	calls     int
}

func (f *fakeSystem) CPU() (float64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	return f.cpu, f.err
}

func (f *fakeSystem) Load() (float64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	return f.load, f.err
}

func (f *fakeSystem) set(cpu, load float64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cpu, f.load = cpu, load
}

func (f *fakeSystem) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls
}

// systemStep is one step of a system rule's table: at the fake time at,
// with the host reading host (cpu or load), exit the oldest requests held
// (exit of them), then enter requests (enter of them, each expected to pass
// or not).
type systemStep struct {
	at        time.Duration
	host      float64
	enter     int
	pass      []bool
	exit      int   // requests to exit, oldest first
	wantLimit int64 // of a rejection, when not 0
}

func TestSystemRuleSignals(t *testing.T) {
	ms := time.Millisecond
	yes, no := true, false
	tests := []struct {
		name  string
		rule  core.Rule
		steps []systemStep
	}{
		{"inflight", core.Rule{Signal: core.SignalInFlight, Threshold: 2}, []systemStep{
			{at: 0, enter: 3, pass: []bool{yes, yes, no}, wantLimit: 2},
			{at: 10 * ms, exit: 1},
			{at: 10 * ms, enter: 2, pass: []bool{yes, no}},
		}},
		{"qps over the last second", core.Rule{Signal: core.SignalQPS, Threshold: 3}, []systemStep{
			{at: 0, enter: 2, pass: []bool{yes, yes}},
			{at: 500 * ms, enter: 2, pass: []bool{yes, no}, wantLimit: 3},
			{at: 999 * ms, enter: 1, pass: []bool{no}},
			{at: 1000 * ms, enter: 3, pass: []bool{yes, yes, no}}, // the first two left the window
			{at: 1500 * ms, enter: 1, pass: []bool{yes}},          // so did the third
		}},
		{"average rt", core.Rule{Signal: core.SignalRT, Threshold: 1000}, []systemStep{
			{at: 0, enter: 4, pass: []bool{yes, yes, yes, yes}},
			{at: 500 * ms, exit: 2},                     // rt 500ms
			{at: 510 * ms, enter: 1, pass: []bool{yes}}, // under the threshold: no bound
			{at: 1200 * ms, exit: 2},                    // rt 1200ms: over it
			// 4 ended in the last 0.91s: 4.4 per second, times 1s, plus
			// one: a bound of 5 in flight, of which 1 is.
			{at: 1210 * ms, enter: 5, pass: []bool{yes, yes, yes, yes, no}, wantLimit: 5},
			{at: 2300 * ms, exit: 5},
			{at: 2300 * ms, enter: 1, pass: []bool{yes}}, // a second after its last refusal
		}},
		{"cpu", core.Rule{Signal: core.SignalCPU, Threshold: 0.8}, []systemStep{
			{at: 0, host: 0.5, enter: 2, pass: []bool{yes, yes}},
			{at: 0, host: 0.8, enter: 1, pass: []bool{yes}},
			{at: 0, host: 0.81, enter: 1, pass: []bool{no}},
			{at: 0, host: 0.2, enter: 1, pass: []bool{yes}},
		}},
		{"load", core.Rule{Signal: core.SignalLoad, Threshold: 4}, []systemStep{
			{at: 0, host: 3.9, enter: 1, pass: []bool{yes}},
			{at: 0, host: 4.5, enter: 1, pass: []bool{no}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := &fakeSystem{}
			fc := clock.NewFake(10 * time.Second)
			r := tt.rule
			r.Name, r.Resource, r.Kind = "sys", "*", core.KindSystem
			g, err := core.New(core.WithClock(fc), core.WithSystemSource(src), core.WithRules(r))
			require.NoError(t, err)
			defer g.Close()
			start := fc.Now()
			var held []core.Entry
			for i, st := range tt.steps {
				fc.Set(start + st.at)
				if r.Signal == core.SignalCPU || r.Signal == core.SignalLoad {
					src.set(st.host, st.host)
					require.NoError(t, g.SetRules([]core.Rule{r}), "a reload samples at once")
				}
				for range st.exit {
					held[0].Exit(nil)
					held = held[1:]
				}
				for j := range st.enter {
					e, err := g.Enter(context.Background(), "GET /x")
					if st.pass[j] {
						require.NoError(t, err, "step %d request %d", i, j)
						held = append(held, e)
						continue
					}
					b := blockedBy(t, err)
					assert.Equal(t, core.KindSystem, b.Kind, "step %d", i)
					assert.Equal(t, string(core.KindSystem), b.Reason())
					assert.False(t, b.Never)
					assert.Positive(t, b.RetryAfter)
					if st.wantLimit != 0 {
						assert.Equal(t, st.wantLimit, b.Limit, "step %d", i)
					}
				}
			}
			for i := range held {
				held[i].Exit(nil)
			}
			snap := g.Snapshot()
			require.NotNil(t, snap.Rules[0].System)
			assert.Zero(t, snap.Rules[0].InFlight)
			assert.Positive(t, snap.Resources[0].Total.BlockedBy[string(core.KindSystem)])
		})
	}
}

// bbrGuard returns a Guard on a fake clock whose one rule, r, is a cpu
// system rule with the BBR check at threshold 0.5, and its fake host
// source, reading 0.1 of CPU to begin with.
func bbrGuard(t *testing.T) (*core.Guard, *clock.Fake, *fakeSystem, core.Rule) {
	t.Helper()
	src := &fakeSystem{cpu: 0.1}
	fc := clock.NewFake(10 * time.Second)
	r := core.Rule{Name: "cpu", Resource: "*", Kind: core.KindSystem, Signal: core.SignalCPU, Threshold: 0.5, Strategy: core.StrategyBBR}
	g, err := core.New(core.WithClock(fc), core.WithSystemSource(src), core.WithRules(r))
	require.NoError(t, err)
	t.Cleanup(func() { _ = g.Close() })
	return g, fc, src, r
}

func TestSystemRuleBBR(t *testing.T) {
	g, fc, src, r := bbrGuard(t)
	ctx := context.Background()

	// 50 requests of 20ms ended within half a second: 100 per second
	// times 20ms sustains 2 in flight, and the bound is one more (which
	// lets the throughput show more), and one more waiting while the rule
	// has refused less than a fifth as many requests as it admitted.
	var held []core.Entry
	for range 50 {
		e, err := g.Enter(ctx, "GET /x")
		require.NoError(t, err)
		held = append(held, e)
	}
	fc.Advance(20 * time.Millisecond)
	for i := range held {
		held[i].Exit(nil)
	}
	held = held[:0]
	src.set(0.9, 0)
	require.NoError(t, g.SetRules([]core.Rule{r}))
	fc.Advance(30 * time.Millisecond)

	for i, want := range []bool{true, true, true, true, false, false} {
		e, err := g.Enter(ctx, "GET /x")
		if want {
			require.NoError(t, err, "request %d", i)
			held = append(held, e)
			continue
		}
		b := blockedBy(t, err)
		assert.Equal(t, int64(4), b.Limit, "the BBR bound")
		assert.Equal(t, system.Every, b.RetryAfter)
	}
	fc.Advance(20 * time.Millisecond)
	held[0].Exit(nil)
	_, err := g.Enter(ctx, "GET /x")
	require.NoError(t, err, "a request ended: room under the bound")

	// Without BBR every request is shed while CPU is over the threshold.
	r.Strategy = ""
	require.NoError(t, g.SetRules([]core.Rule{r}))
	_, err = g.Enter(ctx, "GET /x")
	blockedBy(t, err)
}

// TestSystemRuleBBRBoundsByCompletions floods a rule: 100 requests enter
// in a tenth of a second while only 50 of them end, after 100ms each. The
// throughput the service showed is the 50 that ended (100 per second over
// the half second the rate is read over), which sustains 10 in flight (a
// bound of 12 with the one more and one waiting), not the 100 that entered
// (200 per second, 22): a bound on what enters would follow the flood.
func TestSystemRuleBBRBoundsByCompletions(t *testing.T) {
	g, fc, src, r := bbrGuard(t)
	ctx := context.Background()
	var held []core.Entry
	for range 100 {
		e, err := g.Enter(ctx, "GET /x")
		require.NoError(t, err)
		held = append(held, e)
	}
	fc.Advance(100 * time.Millisecond)
	for _, e := range held[:50] {
		e.Exit(nil)
	}
	src.set(0.9, 0)
	require.NoError(t, g.SetRules([]core.Rule{r}))
	// 50 in flight, far above the 10 the completions sustain.
	_, err := g.Enter(ctx, "GET /x")
	b := blockedBy(t, err)
	assert.Equal(t, int64(12), b.Limit, "the BBR bound: 100 ended per second x 100ms + 1 + 1")
	for _, e := range held[50:] {
		e.Exit(nil)
	}
}

// TestSystemRuleBBRCountsOnlyServedRequests: requests admitted while the
// bound was off queue in the service, and those whose callers give up end
// at the rate they came, not the service's. Here 50 requests of 20ms are
// served (100 per second over the half second the rate is read over: a
// bound of 4, one waiting) while 60 others, abandoned in the queue, end a
// tenth of a second later with their context's error (deadline passed,
// client gone, wrapped or not): counted as completions they made a bound
// of 220 per second x 20ms + 2 = 6.4. A request that failed otherwise was
// served: it counts (uncounted, a bound of 3).
func TestSystemRuleBBRCountsOnlyServedRequests(t *testing.T) {
	g, fc, src, r := bbrGuard(t)
	ctx := context.Background()
	enter := func(k int) []core.Entry {
		var held []core.Entry
		for range k {
			e, err := g.Enter(ctx, "GET /x")
			require.NoError(t, err)
			held = append(held, e)
		}
		return held
	}
	queued := enter(60) // the CPU reads 0.1: no bound
	served := enter(50)
	fc.Advance(20 * time.Millisecond)
	for i, e := range served {
		if i%2 == 0 {
			e.Exit(errors.New("the handler failed")) // served all the same
		} else {
			e.Exit(nil)
		}
	}
	fc.Advance(100 * time.Millisecond)
	for i, e := range queued {
		e.Exit([]error{context.DeadlineExceeded, context.Canceled, fmt.Errorf("read body: %w", context.Canceled)}[i%3])
	}
	src.set(0.9, 0)
	require.NoError(t, g.SetRules([]core.Rule{r}))
	held := enter(4)
	_, err := g.Enter(ctx, "GET /x")
	assert.Equal(t, int64(4), blockedBy(t, err).Limit, "the BBR bound: 100 served per second x 20ms + 2")
	snap := g.Snapshot()
	require.NotNil(t, snap.Rules[0].System)
	assert.Equal(t, 20*time.Millisecond, snap.Rules[0].System.AvgRT, "the average of the requests served")
	for _, e := range held {
		e.Exit(nil)
	}
}

// TestSystemRuleBBRRemembersTheLowestResponseTime: once a queue forms,
// every request of the last second waited in it, and a minimum taken over
// that second would be the queue's (500ms here), a bound that keeps any
// queue going. The check remembers the lowest response time of 10 seconds
// (20ms), as BBR does.
func TestSystemRuleBBRRemembersTheLowestResponseTime(t *testing.T) {
	g, fc, src, r := bbrGuard(t)
	ctx := context.Background()
	wave := func(rt time.Duration) {
		var held []core.Entry
		for range 50 {
			e, err := g.Enter(ctx, "GET /x")
			require.NoError(t, err)
			held = append(held, e)
		}
		fc.Advance(rt)
		for _, e := range held {
			e.Exit(nil)
		}
	}
	wave(20 * time.Millisecond)
	fc.Advance(2 * time.Second)
	wave(500 * time.Millisecond) // 50 ended in half a second: 100 per second
	src.set(0.9, 0)
	require.NoError(t, g.SetRules([]core.Rule{r}))
	var held []core.Entry
	for i := range 4 { // 100 per second x 20ms + 2
		e, err := g.Enter(ctx, "GET /x")
		require.NoError(t, err, "request %d", i)
		held = append(held, e)
	}
	_, err := g.Enter(ctx, "GET /x")
	assert.Equal(t, int64(4), blockedBy(t, err).Limit, "the bound takes the 20ms of 2s ago, not the queue's 500ms")
	for _, e := range held {
		e.Exit(nil)
	}
}

// TestSystemRuleBBRHoldsAfterTheSignalDips: the host is read every half
// second, and a reading that dips below the threshold between two over it
// must not let a flood in: the bound applies for a second after the last
// reading over the threshold.
func TestSystemRuleBBRHoldsAfterTheSignalDips(t *testing.T) {
	g, fc, src, r := bbrGuard(t)
	ctx := context.Background()
	var held []core.Entry
	for range 50 { // 100 per second over half a second, of 20ms: a bound of 4
		e, err := g.Enter(ctx, "GET /x")
		require.NoError(t, err)
		held = append(held, e)
	}
	fc.Advance(20 * time.Millisecond)
	for _, e := range held {
		e.Exit(nil)
	}
	held = held[:0]
	src.set(0.9, 0)
	require.NoError(t, g.SetRules([]core.Rule{r}))
	e, err := g.Enter(ctx, "GET /x") // seen over the threshold
	require.NoError(t, err)
	held = append(held, e)

	src.set(0.3, 0) // a dip
	require.NoError(t, g.SetRules([]core.Rule{r}))
	fc.Advance(500 * time.Millisecond)
	for range 3 {
		e, err := g.Enter(ctx, "GET /x")
		require.NoError(t, err)
		held = append(held, e)
	}
	_, err = g.Enter(ctx, "GET /x")
	blockedBy(t, err) // within a second of the last reading over it: still bound

	fc.Advance(600 * time.Millisecond)
	for range 10 {
		e, err := g.Enter(ctx, "GET /x")
		require.NoError(t, err, "a second under the threshold: no bound")
		held = append(held, e)
	}
	for _, e := range held {
		e.Exit(nil)
	}
}

func TestSystemRuleBBRAdmitsOneWhenNoneInFlight(t *testing.T) {
	src := &fakeSystem{cpu: 0.99}
	fc := clock.NewFake(10 * time.Second)
	g, err := core.New(core.WithClock(fc), core.WithSystemSource(src), core.WithRules(core.Rule{
		Resource: "*", Kind: core.KindSystem, Signal: core.SignalCPU, Threshold: 0.5, Strategy: core.StrategyBBR}))
	require.NoError(t, err)
	defer g.Close()
	e, err := g.Enter(context.Background(), "GET /x")
	require.NoError(t, err, "nothing in flight: the check never sheds everything")
	_, err = g.Enter(context.Background(), "GET /x")
	blockedBy(t, err) // no throughput known yet
	e.Exit(nil)
}

func TestSystemRuleRefusedWhenTheSignalCannotBeRead(t *testing.T) {
	for _, sig := range []core.Signal{core.SignalCPU, core.SignalLoad} {
		r := core.Rule{Name: "host", Resource: "*", Kind: core.KindSystem, Signal: sig, Threshold: 0.9}
		// No /proc, no cgroup: a host without the files.
		host := system.NewHost(t.TempDir(), sysclock.New(), nil)
		_, err := core.New(core.WithSystemSource(host), core.WithRules(r))
		require.Error(t, err)
		assert.ErrorContains(t, err, `rules[0] (host): signal `+string(sig)+` cannot be read on this host: `)
		assert.ErrorContains(t, err, "no such file or directory")

		g, err := core.New(core.WithSystemSource(&fakeSystem{err: errors.New("boom")}))
		require.NoError(t, err)
		err = g.SetRules([]core.Rule{r})
		assert.ErrorContains(t, err, "cannot be read on this host: boom")
		assert.Empty(t, g.Rules(), "the rules in force are kept")
		require.NoError(t, g.Close())
	}
	// The signals counted by the rule itself need nothing of the host.
	_, err := core.New(core.WithSystemSource(system.NewHost(t.TempDir(), sysclock.New(), nil)),
		core.WithRules(core.Rule{Resource: "*", Kind: core.KindSystem, Signal: core.SignalInFlight, Threshold: 10}))
	require.NoError(t, err)
}

func TestSystemSamplerRunsOffTheRequestPath(t *testing.T) {
	src := &fakeSystem{cpu: 0.9}
	fc := clock.NewFake(10 * time.Second)
	r := core.Rule{Name: "cpu", Resource: "*", Kind: core.KindSystem, Signal: core.SignalCPU, Threshold: 0.5}
	g, err := core.New(core.WithClock(fc), core.WithSystemSource(src), core.WithRules(r))
	require.NoError(t, err)
	defer g.Close()
	ctx := context.Background()

	_, err = g.Enter(ctx, "GET /x")
	blockedBy(t, err)
	calls := src.count()
	src.set(0.1, 0)
	for range 5 {
		_, err = g.Enter(ctx, "GET /x")
		blockedBy(t, err) // the source is not read on the request path
	}
	assert.Equal(t, calls, src.count())

	// The sampler's goroutine reads it once the Guard's clock says so.
	fc.Advance(system.Every)
	require.Eventually(t, func() bool {
		e, err := g.Enter(ctx, "GET /x")
		e.Exit(nil)
		return err == nil
	}, 10*time.Second, time.Millisecond)

	// No rule needs the host: the goroutine stops.
	require.NoError(t, g.SetRules(nil))
	require.Eventually(t, func() bool {
		return !strings.Contains(goleak.Find().Error(), "system.(*Sampler).run")
	}, 10*time.Second, time.Millisecond)
}

// Responses that read 0 (instant on the fake clock) count for the BBR check
// as taking system.MinRT, not as sustaining nothing.
func TestSystemRuleBBRWithInstantResponses(t *testing.T) {
	g, _, src, r := bbrGuard(t)
	ctx := context.Background()
	for range 5000 { // 10000 per second over half a second, of 0s each
		e, err := g.Enter(ctx, "GET /x")
		require.NoError(t, err)
		e.Exit(nil)
	}
	src.set(0.9, 0)
	require.NoError(t, g.SetRules([]core.Rule{r}))
	for i := range 12 { // 10000/s times 1ms, plus 2
		_, err := g.Enter(ctx, "GET /x")
		require.NoError(t, err, "request %d", i)
	}
	_, err := g.Enter(ctx, "GET /x")
	assert.Equal(t, int64(12), blockedBy(t, err).Limit)
}

// A system rule is no quota policy: a request it rejects along with a
// flow rule lists the flow rule's policy only, and both count the block.
func TestSystemRuleIsNoQuotaPolicy(t *testing.T) {
	g, _ := newGuard(t,
		core.Rule{Name: "rate", Resource: "*", Kind: core.KindFlow, Limit: 1, Window: time.Minute},
		core.Rule{Name: "sys", Resource: "*", Kind: core.KindSystem, Signal: core.SignalInFlight, Threshold: 1})
	ctx := context.Background()
	e, err := g.Enter(ctx, "GET /x")
	require.NoError(t, err)
	defer e.Exit(nil)
	_, err = g.Enter(ctx, "GET /x")
	b := blockedBy(t, err)
	require.Len(t, b.Policies, 1)
	assert.Equal(t, "rate", b.Policies[0].Rule)
	assert.True(t, b.Policies[0].Blocked)
	assert.Equal(t, "rate", b.Rule, "the rule with the later retry time decides")
	for _, rs := range g.Snapshot().Rules {
		assert.Equal(t, int64(1), rs.BlockedTotal, rs.Rule.Name)
	}
}

func TestSystemRuleNeverPasses(t *testing.T) {
	g, _ := newGuard(t, core.Rule{Name: "sys", Resource: "*", Kind: core.KindSystem, Signal: core.SignalQPS, Threshold: 5})
	_, err := g.Enter(context.Background(), "GET /x", core.WithCount(6))
	b := blockedBy(t, err)
	assert.True(t, b.Never)
	assert.Zero(t, b.RetryAfter)
	assert.EqualError(t, b, `sluice: GET /x blocked by system rule "sys": it asks more than the threshold 5; the request will never pass`)
	_, err = g.Enter(context.Background(), "GET /x", core.WithCount(5))
	require.NoError(t, err)
	_, err = g.Enter(context.Background(), "GET /x")
	assert.False(t, blockedBy(t, err).Never, "the window moves on")
}

// A shadow system rule counts what it would shed and holds the requests it
// admitted until they end, as an enforced one does.
func TestSystemRuleShadow(t *testing.T) {
	g, _ := newGuard(t, core.Rule{Name: "sys", Resource: "*", Kind: core.KindSystem, Signal: core.SignalInFlight, Threshold: 1, Shadow: true})
	ctx := context.Background()
	a, err := g.Enter(ctx, "GET /x")
	require.NoError(t, err)
	b, err := g.Enter(ctx, "GET /x")
	require.NoError(t, err, "a shadow rule never blocks")
	rs := g.Snapshot().Rules[0]
	assert.Equal(t, int64(1), rs.InFlight, "the second request took nothing of it")
	assert.Equal(t, int64(1), rs.ShadowedTotal)
	a.Exit(nil)
	b.Exit(nil)
	assert.Zero(t, g.Snapshot().Rules[0].InFlight, "the admitted request ended")
	_, err = g.Enter(ctx, "GET /x")
	require.NoError(t, err)
	assert.Equal(t, int64(1), g.Snapshot().Rules[0].ShadowedTotal, "room again")
}

func TestSystemRuleUse(t *testing.T) {
	g, _ := newGuard(t,
		core.Rule{Name: "in", Resource: "*", Kind: core.KindSystem, Signal: core.SignalInFlight, Threshold: 10},
		core.Rule{Name: "rate", Resource: "*", Kind: core.KindSystem, Signal: core.SignalQPS, Threshold: 100},
		core.Rule{Name: "rt", Resource: "*", Kind: core.KindSystem, Signal: core.SignalRT, Threshold: 100})
	for range 3 {
		_, err := g.Enter(context.Background(), "GET /x")
		require.NoError(t, err)
	}
	rules := g.Snapshot().Rules
	assert.True(t, rules[0].HasUse)
	assert.Equal(t, [2]int64{10, 3}, [2]int64{rules[0].Limit, rules[0].Use})
	assert.True(t, rules[1].HasUse)
	assert.Equal(t, [2]int64{100, 3}, [2]int64{rules[1].Limit, rules[1].Use})
	assert.False(t, rules[2].HasUse, "a signal of load is no count")
	var st *core.SystemStats = rules[2].System
	assert.Equal(t, int64(3), st.Pass)
}

// TestSystemRuleBBRShedsByPriorityUnderOverload simulates a service of two
// CPUs whose requests take 2ms of CPU each (1000 per second) behind a cpu
// rule with the BBR check, the host saturated (CPU read 1.0), offered three
// times its capacity: a sixth critical (half the capacity), the rest
// default and sheddable alike. The rule reads the minimum response time as
// the 2ms a request takes, sheds under 1% of the critical requests,
// sheddable ones first, and keeps the service busy. Requests are timed on
// the Guard's clock (the fake one here, the monotonic one by default): on
// the coarse clock they were timed on before, a busy host read 0 for
// them, and the bound fell to one request at a time.
func TestSystemRuleBBRShedsByPriorityUnderOverload(t *testing.T) {
	b := backendSim{workers: 2, service: 2 * time.Millisecond, deadline: time.Second}
	src := &fakeSystem{cpu: 1}
	fc := clock.NewFake(10 * time.Second)
	g, err := core.New(core.WithClock(fc), core.WithSystemSource(src), core.WithRules(core.Rule{
		Name: "cpu", Resource: "*", Kind: core.KindSystem, Signal: core.SignalCPU, Threshold: 0.8,
		Strategy: core.StrategyBBR, Priority: "header:X-Priority",
	}))
	require.NoError(t, err)
	t.Cleanup(func() { _ = g.Close() })
	const d = 20 * time.Second
	var minRT time.Duration
	out := simulate(t, g, fc, b, mixed(3, true), 2*time.Second, d, 5, func(at time.Duration) {
		if s := g.Snapshot().Rules[0].System; s != nil && s.MinRT > 0 && (minRT == 0 || s.MinRT < minRT) {
			minRT = s.MinRT
		}
	})
	refused := func(l levelSim) float64 { return float64(l.refused) / float64(l.sent) }
	t.Logf("refused: critical %.4f, default %.3f, sheddable %.3f; goodput %.2f of the capacity; lowest minimum RT %v",
		refused(out[0]), refused(out[1]), refused(out[2]), sum(out).goodput(b, d), minRT)
	assert.Less(t, refused(out[0]), 0.01, "critical")
	assert.Greater(t, refused(out[2]), refused(out[1]), "sheddable first")
	assert.Greater(t, refused(out[1]), refused(out[0]))
	assert.Equal(t, b.service, minRT, "the minimum response time")
	assert.Greater(t, sum(out).goodput(b, d), 0.9, "the service stays busy")
	assert.Zero(t, sum(out).late, "what is admitted is served in time")
}

// TestSystemCPURuleIgnoresBusyNeighbours: a cpu rule on a host whose every
// CPU other processes keep busy (its /proc/stat, in a fake file tree with
// no CPU quota) does not shed a service that uses a tenth of the CPUs it
// may use (its /proc/self/stat): it judges the service's own pressure.
// Before, it read the machine's /proc/stat and shed every request.
func TestSystemCPURuleIgnoresBusyNeighbours(t *testing.T) {
	root, write := hostTree(t)
	write("proc/stat", "cpu 1000000 0 0 0 0 0 0 0 0 0\n")
	write("proc/self/cgroup", "0::/\n")
	write("proc/self/stat", "7 (svc) S 1 7 7 0 -1 0 0 0 0 0 100 0 0 0 20 0 4 0 1 1 1\n")
	fc := clock.NewFake(10 * time.Second)
	host := system.NewHost(root, fc, func() int { return 2 })
	g, err := core.New(core.WithClock(fc), core.WithSystemSource(host), core.WithRules(core.Rule{
		Name: "cpu", Resource: "*", Kind: core.KindSystem, Signal: core.SignalCPU, Threshold: 0.8,
	}))
	require.NoError(t, err)
	defer g.Close()
	ctx := context.Background()
	e, err := g.Enter(ctx, "GET /x")
	require.NoError(t, err, "the first reading")
	e.Exit(nil)
	// 10 ticks (0.1s) of CPU in the next half second, of 2 CPUs.
	write("proc/self/stat", "7 (svc) S 1 7 7 0 -1 0 0 0 0 0 105 5 0 0 20 0 4 0 1 1 1\n")
	fc.Advance(system.Every)
	require.Eventually(t, func() bool { return g.Snapshot().Rules[0].System.Host > 0 }, 10*time.Second, time.Millisecond)
	assert.InDelta(t, 0.1, g.Snapshot().Rules[0].System.Host, 1e-9)
	e, err = g.Enter(ctx, "GET /x")
	require.NoError(t, err, "a tenth of its CPUs: not shed")
	e.Exit(nil)
}
