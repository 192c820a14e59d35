package core_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/clock"
)

// TestCapacityUnderOpenLoad is the CPU-bound benchmark of
// examples/overload on the fake clock: smallService (2 workers of 20ms,
// 100 requests per second, the CPU-bound backend on 2 CPUs), Poisson
// arrivals at 1x, 2x, 5x and 10x its capacity, 1s deadline,
// behind an adaptive rule with no number in it, and behind a cpu system
// rule with the BBR check on a host read as saturated (CPU 1.0). Each
// serves at least 90% of the capacity at every load, with a p99 latency
// of the requests admitted at most 3x the unloaded one (no rule, half
// the capacity). Before, the adaptive rule's probes stopped at its
// minLimit (4), above the 2 workers, so that the minimum response time
// included a queue (p99 4.0x at 5x and 10x, constant service); the BBR
// bound was twice what the throughput sustains, 4 in flight for 2 workers
// (p99 3.6x-4.2x in the example).
func TestCapacityUnderOpenLoad(t *testing.T) {
	const warmup, d = 5 * time.Second, 20 * time.Second
	b := smallService
	g, fc := newGuard(t, core.Rule{Name: "none", Resource: "*", Kind: core.KindConcurrency, Limit: 1 << 20})
	unloaded := sum(simulate(t, g, fc, b, []streamSim{{load: 0.5, fixed: true}}, warmup, d, 1, nil)).p99()
	require.Positive(t, unloaded)
	rules := map[string]func() (*core.Guard, *clock.Fake){
		"adaptive": func() (*core.Guard, *clock.Fake) {
			return newGuard(t, core.Rule{Name: "a", Resource: "*", Kind: core.KindAdaptive})
		},
		"bbr": func() (*core.Guard, *clock.Fake) {
			fc := clock.NewFake(10 * time.Second)
			g, err := core.New(core.WithClock(fc), core.WithSystemSource(&fakeSystem{cpu: 1}), core.WithRules(core.Rule{
				Name: "cpu", Resource: "*", Kind: core.KindSystem, Signal: core.SignalCPU, Threshold: 0.8, Strategy: core.StrategyBBR}))
			require.NoError(t, err)
			t.Cleanup(func() { _ = g.Close() })
			return g, fc
		},
	}
	for _, name := range []string{"adaptive", "bbr"} {
		for _, load := range []float64{1, 2, 5, 10} {
			g, fc := rules[name]()
			out := sum(simulate(t, g, fc, b, []streamSim{{load: load, fixed: true}}, warmup, d, 1, nil))
			good, p99 := out.goodput(b, d), out.p99()
			t.Logf("%s %2gx: goodput %.3f of capacity, p99 %v = %.1fx unloaded (%v)", name, load, good, p99, float64(p99)/float64(unloaded), unloaded)
			assert.GreaterOrEqual(t, good, 0.9, "%s %gx: goodput", name, load)
			assert.LessOrEqual(t, float64(p99), 3*float64(unloaded), "%s %gx: p99", name, load)
		}
	}
}
