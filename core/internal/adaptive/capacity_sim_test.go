package adaptive

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core/internal/loadtest"
)

// capSim is a backend of workers requests at a time, each taking a
// service time drawn around service (lognormal, coefficient of variation
// cv: a host whose other processes take the CPUs at random), queued in
// order; a queued request leaves when its client gives up, deadline after
// it was sent. Requests arrive at a fixed rate, open loop.
//
// With slice, the workers are the CPUs of a server that computes its
// requests, as Go's scheduler runs them: while every CPU computes, a
// request that arrived waits to reach the controller until one of them
// ends its slice (after each slice of the request it computes: the
// scheduler preempts it to run the others) or frees. Its response time,
// as the controller reads it, starts when it reaches it.
type capSim struct {
	workers  int
	service  time.Duration
	cv       float64
	deadline time.Duration
	slice    time.Duration
}

func (b capSim) capacity() float64 { return float64(b.workers) / b.service.Seconds() }

type capEvent struct {
	at   int64
	kind int // 0 arrive, 1 done, 2 give up, 3 reach the controller, 4 a slice ends
	req  *capReq
}

type capReq struct {
	sent, at int64 // when it was sent and reached the controller
	started  bool
	over     bool
}

// run sends load times the capacity for warmup+d through k (nil: no
// limit) and returns the goodput over d as a share of the capacity, the
// p99 latency of the requests admitted (a late one counting as the
// deadline), and the share refused.
func (b capSim) run(k *Controller, load float64, warmup, d time.Duration, seed uint64) (good, p99, refused float64) {
	rng := rand.New(rand.NewPCG(seed, 9))
	sigma := math.Sqrt(math.Log(1 + b.cv*b.cv))
	draw := func() int64 {
		if b.cv == 0 {
			return int64(b.service)
		}
		return int64(float64(b.service) * math.Exp(rng.NormFloat64()*sigma-sigma*sigma/2))
	}
	var h loadtest.Events[capEvent]
	push := func(e capEvent) { h.Push(e.at, e) }
	gap := int64(float64(time.Second) / (load * b.capacity()))
	end := int64(warmup + d)
	push(capEvent{at: 0, kind: 0})
	busy := 0
	var queue, waiting []*capReq // admitted, waiting for a worker; not yet at the controller
	reach := func(now int64) {
		for _, r := range waiting {
			push(capEvent{at: now, kind: 3, req: r})
		}
		waiting = waiting[:0]
	}
	var lat []float64
	goodN, sent, refusedN := 0, 0, 0
	start := func(now int64) {
		for busy < b.workers && len(queue) > 0 {
			r := queue[0]
			queue = queue[1:]
			if r.over {
				continue
			}
			r.started = true
			busy++
			push(capEvent{at: now + draw(), kind: 1, req: r})
			if b.slice > 0 {
				push(capEvent{at: now + int64(b.slice), kind: 4, req: r})
			}
		}
	}
	finish := func(r *capReq, now int64) {
		r.over = true
		if k != nil {
			k.Done(now, now-r.at, 1, false)
		}
		if r.sent >= int64(warmup) {
			l := min(now-r.sent, int64(b.deadline))
			lat = append(lat, float64(l))
			if now-r.sent <= int64(b.deadline) {
				goodN++
			}
		}
	}
	for h.Len() > 0 {
		e := h.Pop()
		now := e.at
		switch e.kind {
		case 0:
			if now >= end {
				continue
			}
			push(capEvent{at: now + gap, kind: 0})
			r := &capReq{sent: now}
			if b.slice > 0 && busy >= b.workers {
				waiting = append(waiting, r)
			} else {
				push(capEvent{at: now, kind: 3, req: r})
			}
		case 3:
			r := e.req
			counted := r.sent >= int64(warmup)
			if counted {
				sent++
			}
			r.at = now
			if k != nil && !k.Acquire(1, 0) {
				if counted {
					refusedN++
				}
				continue
			}
			queue = append(queue, r)
			push(capEvent{at: r.sent + int64(b.deadline), kind: 2, req: r})
			start(now)
		case 4:
			if !e.req.over {
				reach(now)
				push(capEvent{at: now + int64(b.slice), kind: 4, req: e.req})
			}
		case 1:
			busy--
			finish(e.req, now)
			start(now)
			if busy < b.workers {
				reach(now)
			}
		case 2:
			if !e.req.started && !e.req.over {
				finish(e.req, now)
			}
		}
	}
	slices.Sort(lat)
	if len(lat) > 0 {
		p99 = lat[len(lat)*99/100]
	}
	return float64(goodN) / d.Seconds() / b.capacity(), p99, float64(refusedN) / float64(max(sent, 1))
}

// TestCapacityUnderOpenLoad simulates the CPU-bound benchmark of
// examples/overload on the fake clock, an adaptive rule with the defaults
// in front of 2 workers: of 20ms each (an idle host); of 20ms and 60ms
// varying at random (lognormal, coefficient of variation 0.5 and 1: a host
// that other processes keep busy); and of 20ms, constant and varying
// (0.2), as 2 CPUs under Go's scheduler, a request waiting to reach the
// rule until a CPU frees or ends a slice of 10ms or 15ms. Arrivals at a
// fixed rate of 1x, 2x, 5x and 10x the capacity, 1s deadline, 5 seeds
// each. Every row serves at least 85% of the capacity (measured: 85-101%,
// the lowest at 1x-2x with a varied service: 60ms, cv 1 at 2x read 88%
// before growth was judged by its throughput) with a p99 latency at most 2.8x
// the unloaded one (measured: 0.9-2.7x, the highest at 1x, where the rule
// does not limit). Before, a limit of 3 grew from the unrounded 3.9 a
// slow shrink at 4 had left, to 5, held a sixth of the time: 3.0x at 2x
// with the 15ms slice (now 2.2x). Earlier, probes stopped at minLimit 4,
// above the 2 workers, so that the minimum response time they measured included a queue: p99 4-6x
// at 2x-10x with a constant 20ms; a periodic probe at 3 in flight, above
// the 2 CPUs, raised the minimum to the RT of 3, over which 5 in flight
// read 1.4x: 3.4x at 10x with the 10ms slice; and the interval after a
// probe, its RT lowered by the probe's fewer requests in flight, grew the
// limit from 4 to 6: 3.7x at 5x with the 15ms slice. With a 20ms slice, 4
// in flight read 1.5x the minimum, within the tolerance, and the p99 is
// 3.2-3.8x at 2x-10x (constant service; 2.1-2.7x varied): not a row.
func TestCapacityUnderOpenLoad(t *testing.T) {
	for _, b := range []capSim{
		{workers: 2, service: 20 * time.Millisecond, deadline: time.Second},
		{workers: 2, service: 20 * time.Millisecond, cv: 0.5, deadline: time.Second},
		{workers: 2, service: 60 * time.Millisecond, cv: 0.5, deadline: time.Second},
		{workers: 2, service: 60 * time.Millisecond, cv: 1, deadline: time.Second},
		{workers: 2, service: 20 * time.Millisecond, slice: 10 * time.Millisecond, deadline: time.Second},
		{workers: 2, service: 20 * time.Millisecond, cv: 0.2, slice: 10 * time.Millisecond, deadline: time.Second},
		{workers: 2, service: 20 * time.Millisecond, slice: 15 * time.Millisecond, deadline: time.Second},
		{workers: 2, service: 20 * time.Millisecond, cv: 0.2, slice: 15 * time.Millisecond, deadline: time.Second},
	} {
		_, unloaded, _ := b.run(nil, 0.5, 3*time.Second, 20*time.Second, 1)
		for _, load := range []float64{1, 2, 5, 10} {
			var goods, p99s []float64
			for seed := uint64(1); seed <= 5; seed++ {
				g, p, _ := b.run(New(Config{}, nil), load, 3*time.Second, 5*time.Second, seed)
				goods, p99s = append(goods, g), append(p99s, p/unloaded)
			}
			slices.Sort(goods)
			slices.Sort(p99s)
			t.Logf("%v cv %.1f slice %v load %2.0fx: goodput %3.0f-%3.0f%% of capacity, p99 %.1f-%.1fx unloaded (%.0fms)",
				b.service, b.cv, b.slice, load, 100*goods[0], 100*goods[len(goods)-1], p99s[0], p99s[len(p99s)-1], unloaded/1e6)
			assert.GreaterOrEqual(t, goods[0], 0.85, "%v cv %.1f slice %v at %.0fx", b.service, b.cv, b.slice, load)
			assert.LessOrEqual(t, p99s[len(p99s)-1], 2.8, "%v cv %.1f slice %v at %.0fx: p99 over the unloaded one", b.service, b.cv, b.slice, load)
		}
	}
}

// TestGrowthJudgedSparesParallelBackends runs the controller before
// backends of 4 and 10 workers of 20ms varying at random (coefficient of
// variation 0.5) at 1x, 2x and 10x their capacity, 3 seeds each: a growth
// there buys throughput until the workers are busy, and every row serves
// at least 90% of the capacity (measured 90-100%, as before growth was
// judged by the throughput it buys).
func TestGrowthJudgedSparesParallelBackends(t *testing.T) {
	for _, workers := range []int{4, 10} {
		b := capSim{workers: workers, service: 20 * time.Millisecond, cv: 0.5, deadline: time.Second}
		for _, load := range []float64{1, 2, 10} {
			for seed := uint64(1); seed <= 3; seed++ {
				g, _, _ := b.run(New(Config{}, nil), load, 3*time.Second, 5*time.Second, seed)
				assert.GreaterOrEqual(t, g, 0.9, "%d workers at %gx, seed %d", workers, load, seed)
			}
		}
	}
}

// TestLimitStaysBoundedOnASlowVariedService runs the controller before 2
// workers of 125ms and 250ms varying widely at random (coefficient of
// variation 2), so that an interval sees about one request end and many
// time out, at 2x and 10x, 3 seeds each: the limit ends at most 4 times
// the workers. A minimum taken from the average of a probe's requests,
// timeouts included, once rose to the deadline, under which every
// response time is tolerated: the limit ran up to 130-152.
func TestLimitStaysBoundedOnASlowVariedService(t *testing.T) {
	for _, service := range []time.Duration{125 * time.Millisecond, 250 * time.Millisecond} {
		b := capSim{workers: 2, service: service, cv: 2, deadline: time.Second}
		for _, load := range []float64{2, 10} {
			for seed := uint64(1); seed <= 3; seed++ {
				k := New(Config{}, nil)
				b.run(k, load, 5*time.Second, 10*time.Second, seed)
				assert.LessOrEqual(t, k.Limit(), int64(4*b.workers), "%v at %gx, seed %d", service, load, seed)
			}
		}
	}
}

// TestMinimumFallsOnAFewRequestsAnInterval: a service that ends 2
// requests an interval (fewer than minSamples) becomes faster, 500ms then
// 100ms, its requests far under the limit (no probe comes): within 2s the
// minimum RT follows it down, from the intervals of few taken together.
// Taking only intervals of minSamples or more, it stayed at 500ms, under
// which a service 5x slower than it is was tolerated.
func TestMinimumFallsOnAFewRequestsAnInterval(t *testing.T) {
	k := New(Config{}, nil)
	var now int64
	for i := range 60 { // 6s: 3s slow, then fast
		rt := int64(500 * time.Millisecond)
		if i >= 30 {
			rt = int64(100 * time.Millisecond)
		}
		now += int64(DefaultInterval)
		for range 2 {
			require.True(t, k.Acquire(1, 0))
			k.Done(now, rt, 1, false)
		}
		if i == 49 {
			_, m := k.RT()
			assert.LessOrEqual(t, m, 100*time.Millisecond, "2s after")
		}
	}
}
