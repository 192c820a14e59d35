package core_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/clock"
)

// levelParams returns the params of a request of level p.
func levelParams(p core.Priority) core.EnterOption {
	return core.WithParams(core.ParamMap{"header:X-Priority": {string(p)}})
}

// priorityRules are rules of 10 requests in flight that shed by the
// header X-Priority, of each kind that does.
func priorityRules() map[string]core.Rule {
	return map[string]core.Rule{
		"system": {Name: "p", Resource: "*", Kind: core.KindSystem, Signal: core.SignalInFlight, Threshold: 10, Priority: "header:X-Priority"},
		// Its limit cannot move from 10.
		"adaptive": {Name: "p", Resource: "*", Kind: core.KindAdaptive, MinLimit: 10, MaxLimit: 10, Priority: "header:X-Priority"},
	}
}

func TestPrioritiesShedLowerLevelsFirst(t *testing.T) {
	const (
		c = core.PriorityCritical
		d = core.PriorityDefault
		s = core.PrioritySheddable
	)
	type step struct {
		p    core.Priority
		pass bool
	}
	// Each step enters one request of a level; the limit is 10 in flight.
	steps := map[string][]step{
		// With critical requests coming, default ones leave it 10% (1)
		// beyond its peak; sheddable ones leave that, and 1 beyond
		// default's peak.
		"system": {
			{c, true}, {c, true}, {c, true}, {c, true}, {c, true}, // 5 in flight, critical's peak 5
			{d, true}, {d, true}, // 7: sheddable may go up to 10-1-(0+1) = 8
			{s, true},             // 8
			{s, false}, {d, true}, // 9: default may go up to 10-1 = 9
			{s, false}, {d, false}, {c, true}, // 10: the limit
			{c, false}, {d, false}, {s, false},
		},
		// A level leaves 10% (1) free for each level above coming, and
		// passes the limit by 20% (2) for each level below coming.
		"adaptive": {
			{c, true}, {c, true}, {c, true}, {c, true}, {c, true}, // 5 in flight
			{d, true}, {d, true}, // 7: default may go up to 10-1 = 9
			{s, true},             // 8: sheddable up to 10-1-1 = 8
			{s, false}, {d, true}, // 9: default now up to 10-1+2 = 11
			{s, false}, {d, true}, {d, true}, {d, false}, // 11
			{c, true}, {c, true}, {c, true}, // 14: critical up to 10+2+2
			{c, false}, {d, false}, {s, false},
		},
	}
	for kind, r := range priorityRules() {
		t.Run(kind, func(t *testing.T) {
			g, _ := newGuard(t, r)
			ctx := context.Background()
			for i, st := range steps[kind] {
				_, err := g.Enter(ctx, "GET /x", levelParams(st.p))
				if st.pass {
					require.NoError(t, err, "step %d (%s)", i, st.p)
				} else {
					assert.Equal(t, core.Kind(kind), blockedBy(t, err).Kind, "step %d (%s)", i, st.p)
				}
			}
		})
	}
}

func TestPriorityFromContextAndDefaults(t *testing.T) {
	for kind, r := range priorityRules() {
		t.Run(kind, func(t *testing.T) {
			g, _ := newGuard(t, r)
			ctx := context.Background()
			// A single level coming has the whole limit, whichever it is.
			var held []core.Entry
			for i := range 10 {
				e, err := g.Enter(ctx, "GET /x", levelParams("bulk")) // unknown: default
				require.NoError(t, err, "request %d", i)
				held = append(held, e)
			}
			_, err := g.Enter(ctx, "GET /x")
			blockedBy(t, err)
			for i := range held {
				held[i].Exit(nil)
			}
			held = held[:0]

			// Critical requests keep room from default ones; the level
			// WithPriority gives wins over the header.
			crit := core.WithPriority(ctx, core.PriorityCritical)
			for range 5 {
				e, err := g.Enter(crit, "GET /x", levelParams(core.PrioritySheddable))
				require.NoError(t, err)
				held = append(held, e)
			}
			for range 4 {
				e, err := g.Enter(ctx, "GET /x")
				require.NoError(t, err)
				held = append(held, e)
			}
			_, err = g.Enter(ctx, "GET /x")
			blockedBy(t, err) // default: 10 would leave critical no headroom
			e, err := g.Enter(core.WithPriority(ctx, "CRITICAL"), "GET /x")
			require.NoError(t, err, "levels are named in any case")
			held = append(held, e)
			for i := range held {
				held[i].Exit(nil)
			}
			assert.Zero(t, g.Snapshot().Rules[0].InFlight)
		})
	}
}

// A level is shed only when every lower one is: whenever a request of a
// level is rejected, a request of each lower level is rejected too, in a
// random walk of requests entering and ending on a fake clock.
func TestPriorityNeverShedsAHigherLevelFirst(t *testing.T) {
	levels := []core.Priority{core.PrioritySheddable, core.PriorityDefault, core.PriorityCritical}
	for kind, r := range priorityRules() {
		t.Run(kind, func(t *testing.T) {
			g, fc := newGuard(t, r)
			ctx := context.Background()
			rng := rand.New(rand.NewPCG(17, 1))
			var held []core.Entry
			rejected := map[core.Priority]int{}
			for step := range 5000 {
				fc.Advance(time.Duration(rng.IntN(20)) * time.Millisecond)
				if len(held) > 0 && rng.IntN(2) == 0 {
					i := rng.IntN(len(held))
					held[i].Exit(nil)
					held = append(held[:i], held[i+1:]...)
					continue
				}
				lv := rng.IntN(3)
				e, err := g.Enter(ctx, "GET /x", levelParams(levels[lv]))
				if err == nil {
					held = append(held, e)
					continue
				}
				blockedBy(t, err)
				rejected[levels[lv]]++
				for lower := range lv {
					_, err := g.Enter(ctx, "GET /x", levelParams(levels[lower]))
					require.Error(t, err, "step %d: %s shed, %s admitted", step, levels[lv], levels[lower])
				}
			}
			for i := range held {
				held[i].Exit(nil)
			}
			t.Log(fmt.Sprint(rejected))
			assert.Greater(t, rejected[core.PrioritySheddable], rejected[core.PriorityDefault])
			assert.Greater(t, rejected[core.PriorityDefault], rejected[core.PriorityCritical])
		})
	}
}

// Signals of load shed the lower levels at a lower share of the
// threshold: sheddable above 80% of it, default above 90%, while requests
// of the levels above come.
func TestPriorityOnSignalsOfLoad(t *testing.T) {
	src := &fakeSystem{}
	fc := clock.NewFake(10 * time.Second)
	r := core.Rule{Name: "cpu", Resource: "*", Kind: core.KindSystem, Signal: core.SignalCPU, Threshold: 0.5, Priority: "header:X-Priority"}
	g, err := core.New(core.WithClock(fc), core.WithSystemSource(src), core.WithRules(r))
	require.NoError(t, err)
	defer g.Close()
	ctx := context.Background()
	enter := func(p core.Priority) error {
		e, err := g.Enter(ctx, "GET /x", levelParams(p))
		e.Exit(nil)
		return err
	}
	for _, step := range []struct {
		cpu     float64
		c, d, s bool
	}{
		{cpu: 0.39, c: true, d: true, s: true},
		{cpu: 0.41, c: true, d: true, s: false},  // above 80% of 0.5
		{cpu: 0.46, c: true, d: false, s: false}, // above 90%
		{cpu: 0.51, c: false, d: false, s: false},
	} {
		src.set(step.cpu, 0)
		require.NoError(t, g.SetRules([]core.Rule{r}))
		fc.Advance(10 * time.Millisecond)
		// Highest first: the levels above have had requests.
		for _, want := range []struct {
			p    core.Priority
			pass bool
		}{{core.PriorityCritical, step.c}, {core.PriorityDefault, step.d}, {core.PrioritySheddable, step.s}} {
			err := enter(want.p)
			assert.Equal(t, want.pass, err == nil, "cpu %v, %s: %v", step.cpu, want.p, err)
		}
	}
}

func TestPriorityParamMustHaveASource(t *testing.T) {
	r := core.Rule{Name: "p", Resource: "*", Kind: core.KindAdaptive, Priority: "level"}
	_, err := core.New(core.WithParamSource(core.CustomParams("tenant")), core.WithRules(r))
	assert.EqualError(t, err, `rules[0] (p): priority "level" is not among the CustomParams "tenant"`)
	g, err := core.New(core.WithParamSource(core.CustomParams("level")), core.WithRules(r))
	require.NoError(t, err)
	require.NoError(t, g.Close())
}
