package core_test

import (
	"container/heap"
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core"
)

// ends is a heap of admitted requests by the time they end.
type ends []simReq

type simReq struct {
	at time.Duration
	e  core.Entry
}

func (h ends) Len() int           { return len(h) }
func (h ends) Less(i, j int) bool { return h[i].at < h[j].at }
func (h ends) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *ends) Push(x any)        { *h = append(*h, x.(simReq)) }
func (h *ends) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// TestPriorityUnderOverload simulates, on the fake clock, a service of
// capacity 100 requests in flight of 100ms each (1000 per second) offered
// three times that, Poisson arrivals, a sixth of them critical (half the
// capacity) and the rest default, behind a rule of 100 in flight: the
// critical requests pass at least 99% of the time, and default ones keep
// the service busy but for the room critical ones keep (their peak beyond
// their mean, and 10%): with no queue, a burst finds room only if room was
// left free.
func TestPriorityUnderOverload(t *testing.T) {
	const (
		capacity = 100
		rt       = 100 * time.Millisecond
		offered  = 3 * capacity * float64(time.Second/rt) // per second
		critical = 0.5 * capacity * float64(time.Second/rt)
		duration = 20 * time.Second
	)
	for kind, r := range map[string]core.Rule{
		"system":   {Name: "p", Resource: "*", Kind: core.KindSystem, Signal: core.SignalInFlight, Threshold: capacity, Priority: "header:X-Priority"},
		"adaptive": {Name: "p", Resource: "*", Kind: core.KindAdaptive, MinLimit: capacity, MaxLimit: capacity, Priority: "header:X-Priority"},
	} {
		t.Run(kind, func(t *testing.T) {
			g, fc := newGuard(t, r)
			start := fc.Now()
			rng := rand.New(rand.NewPCG(3, 17))
			var pending ends
			var sent, passed [2]int
			now := time.Duration(0)
			for now < duration {
				now += time.Duration(rng.ExpFloat64() / offered * float64(time.Second))
				for len(pending) > 0 && pending[0].at <= now {
					x := heap.Pop(&pending).(simReq)
					fc.Set(start + x.at)
					x.e.Exit(nil)
				}
				fc.Set(start + now)
				lv, p := 0, core.PriorityDefault
				if rng.Float64() < critical/offered {
					lv, p = 1, core.PriorityCritical
				}
				sent[lv]++
				e, err := g.Enter(context.Background(), "GET /x", levelParams(p))
				if err != nil {
					blockedBy(t, err)
					continue
				}
				passed[lv]++
				heap.Push(&pending, simReq{at: now + rt, e: e})
			}
			for _, x := range pending {
				x.e.Exit(nil)
			}
			critOK := float64(passed[1]) / float64(sent[1])
			goodput := float64(passed[0]+passed[1]) / duration.Seconds()
			t.Logf("critical %d/%d (%.2f%%), default %d/%d, %.0f per second of %d", passed[1], sent[1], 100*critOK, passed[0], sent[0], goodput, capacity*int(time.Second/rt))
			require.Positive(t, sent[1])
			assert.GreaterOrEqual(t, critOK, 0.99, "critical requests pass")
			assert.GreaterOrEqual(t, goodput, 0.7*capacity*float64(time.Second/rt), "the service stays busy")
		})
	}
}
