package system

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core/internal/priority"
)

const ms = int64(time.Millisecond)

// rtStep is one step of a table of an rt rule: at the time at (since the
// table's start), end requests that took the response times done, then
// enter a request per element of pass, which tells whether it passes.
type rtStep struct {
	at   int64
	done []int64 // response times, ms
	pass []bool
}

// TestRTBound: once the average response time of the last fifth of a
// second is over the threshold, requests are admitted while those in
// flight stay under the completions per second times the threshold (one
// when none is in flight), rather than none; the bound stays for a second
// after the average was last over the threshold or it last refused a
// request.
func TestRTBound(t *testing.T) {
	yes, no := true, false
	l := New(Config{Signal: RT, Threshold: 100}, nil)
	start := 10 * int64(time.Second)
	inFlight := 0
	make30 := func(b bool) []bool {
		out := make([]bool, 30)
		for i := range out {
			out[i] = b
		}
		return out
	}
	n := func(k int, rt int64) []int64 {
		out := make([]int64, k)
		for i := range out {
			out[i] = rt
		}
		return out
	}
	for i, st := range []rtStep{
		{at: 0, pass: make30(yes)}, // none ended: no bound
		{at: 300 * ms, done: n(28, 300)},
		// Over: 28 ended in the last 0.91s (0.9s of full buckets and
		// 10ms), 30.8/s: x 100ms, plus one, a bound of 4.08; 2 are in
		// flight.
		{at: 310 * ms, pass: []bool{yes, yes, no}},
		{at: 320 * ms, done: n(3, 250)},
		{at: 330 * ms, pass: []bool{yes, yes, yes, no}}, // 31 in 0.93s: 4.3
		{at: 420 * ms, done: n(3, 90)},
		// 90ms in the last fifth of a second: under the threshold, but the
		// bound holds for a second; 34 ended in 0.92s: 4.7.
		{at: 520 * ms, pass: []bool{yes, yes, yes, no}},
		{at: 610 * ms, done: n(3, 90)},
		{at: 615 * ms, pass: []bool{yes, yes, yes, yes, no}}, // 37 in 0.915s: 5.04
		// The average was last over the threshold at 330ms, but the bound
		// holds for a second after it last refused a request (615ms): 3
		// ended in the last 0.95s: 1.3.
		{at: 1450 * ms, pass: []bool{no}},
		{at: 1500 * ms, done: n(5, 40)},
		{at: 1500 * ms, pass: []bool{yes, no}},                 // none in flight: one passes
		{at: 2500 * ms, pass: []bool{yes, yes, yes, yes, yes}}, // a second later: no bound

	} {
		now := start + st.at
		for _, rt := range st.done {
			l.Done(now, rt*ms, 1, priority.Default, false)
			inFlight--
		}
		for j, want := range st.pass {
			ok, _ := l.Acquire(now, 1, 0, priority.Default)
			assert.Equal(t, want, ok, "step %d request %d", i, j)
			if ok {
				inFlight++
			}
		}
		assert.Equal(t, int64(inFlight), l.InFlight(), "step %d", i)
	}
}

// simStream is a stream of requests of a simulation: rate per second, of
// level.
type simStream struct {
	rate  float64
	level int
}

// simResult is what a simulation measured over its second half.
type simResult struct {
	offered, passed [priority.Levels]int
	done            int     // requests the service completed
	avgRT, maxRT    float64 // of those, ms
}

// simulate drives l, at a constant host reading host, with streams for d
// on a simulated clock, each request sent at a fixed interval, the
// admitted ones served by a service of workers at a time, each taking
// service, first come first served, or, with jitter, between 1-jitter and
// 1+jitter times it (a seeded random draw: a CPU shared with other work).
// With pause, the process pauses for that long at the start of every
// second (a loaded host that does not schedule it): nothing ends or
// arrives, and then all that was due does at once. It counts over the
// second half.
func simulate(l *Limiter, host float64, workers int, service int64, jitter float64, pause int64, streams []simStream, d int64) simResult {
	rnd := rand.New(rand.NewPCG(1, 2))
	cost := func() int64 {
		return int64(float64(service) * (1 + jitter*(2*rnd.Float64()-1)))
	}
	type req struct{ at, level int64 }
	var (
		queue  []req
		busy   []int64 // end of each request in service
		served []req
		r      simResult
		sumRT  int64
	)
	start := 10 * int64(time.Second)
	next := make([]int64, len(streams))
	for now := start; now < start+d; now += ms / 4 {
		if (now-start)%int64(time.Second) < pause {
			continue
		}
		counted := now >= start+d/2
		// End what is served, then start what waits.
		for i := 0; i < len(busy); {
			if busy[i] > now {
				i++
				continue
			}
			q := served[i]
			rt := now - q.at
			l.Done(now, rt, 1, int(q.level), false)
			if counted {
				r.done++
				sumRT += rt
				r.maxRT = max(r.maxRT, float64(rt)/float64(ms))
			}
			busy, served = append(busy[:i], busy[i+1:]...), append(served[:i], served[i+1:]...)
		}
		for len(busy) < workers && len(queue) > 0 {
			busy, served = append(busy, now+cost()), append(served, queue[0])
			queue = queue[1:]
		}
		for i, s := range streams {
			for next[i] <= now-start {
				next[i] += int64(float64(time.Second) / s.rate)
				ok, _ := l.Acquire(now, 1, host, s.level)
				if counted {
					r.offered[s.level]++
				}
				if !ok {
					continue
				}
				if counted {
					r.passed[s.level]++
				}
				if len(busy) < workers {
					busy, served = append(busy, now+cost()), append(served, req{now, int64(s.level)})
				} else {
					queue = append(queue, req{now, int64(s.level)})
				}
			}
		}
	}
	if r.done > 0 {
		r.avgRT = float64(sumRT) / float64(r.done) / float64(ms)
	}
	return r
}

// TestRTHoldsTheThresholdUnderOverload: a service of 10 workers of 50ms
// (200 requests/s), offered 2x and 5x that, under a rule rt 100ms, keeps
// serving at its capacity with the response time about the threshold;
// shedding everything while the average is over the threshold would let
// floods in and out instead. With a critical stream at half the capacity
// in 3x, critical requests all pass.
func TestRTHoldsTheThresholdUnderOverload(t *testing.T) {
	const capacity = 200.0
	for _, tc := range []struct {
		name    string
		streams []simStream
		pause   int64
		maxRT   float64
	}{
		{"2x", []simStream{{2 * capacity, priority.Default}}, 0, 150},
		{"5x", []simStream{{5 * capacity, priority.Default}}, 0, 150},
		{"3x, critical at 0.5x", []simStream{{0.5 * capacity, priority.Critical}, {2.5 * capacity, priority.Sheddable}}, 0, 150},
		// Paused 200ms a second: 20 critical requests arrive at once, with
		// the 10 or so in flight.
		{"3x, critical at 0.5x, pauses", []simStream{{0.5 * capacity, priority.Critical}, {2.5 * capacity, priority.Sheddable}}, 200 * ms, 400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := New(Config{Signal: RT, Threshold: 100}, nil)
			r := simulate(l, 0, 10, 50*ms, 0, tc.pause, tc.streams, 10*int64(time.Second))
			t.Logf("%+v", r)
			up := 1 - float64(tc.pause)/float64(time.Second)
			assert.GreaterOrEqual(t, float64(r.done), 0.95*capacity*up*5, "goodput over the last 5s")
			assert.InDelta(t, 100, r.avgRT, 30, "the average response time is about the threshold")
			assert.Less(t, r.maxRT, tc.maxRT, "no flood")
			if c := r.offered[priority.Critical]; c > 0 {
				assert.GreaterOrEqual(t, float64(r.passed[priority.Critical]), 0.99*float64(c), "critical requests pass")
			}
		})
	}
}

// TestBBRShedsByLevel: a CPU-bound service of 2 workers of 50ms (40
// requests/s) with its CPU over the threshold, offered 3x its capacity,
// critical requests at half of it: the BBR bound is a few requests; the
// sheddable ones in flight do not take the critical ones' room, so these
// all pass while the service keeps busy.
func TestBBRShedsByLevel(t *testing.T) {
	const capacity = 40.0
	l := New(Config{Signal: CPU, Threshold: 0.8, BBR: true}, nil)
	r := simulate(l, 0.95, 2, 50*ms, 0.5, 0, []simStream{{0.5 * capacity, priority.Critical}, {2.5 * capacity, priority.Sheddable}}, 20*int64(time.Second))
	t.Logf("%+v", r)
	c := r.offered[priority.Critical]
	assert.GreaterOrEqual(t, float64(r.passed[priority.Critical]), 0.99*float64(c), "critical requests pass")
	assert.GreaterOrEqual(t, float64(r.done), 0.9*capacity*10, "the service keeps busy")
	assert.LessOrEqual(t, r.maxRT, 300.0, "a short queue")
}

// TestBoundIsReported: the bound in force, of rt or of the BBR check, is
// reported while it applies, and reading it changes nothing.
func TestBoundIsReported(t *testing.T) {
	start := 10 * int64(time.Second)
	rt := New(Config{Signal: RT, Threshold: 100}, nil)
	_, on := rt.Bound(start)
	assert.False(t, on)
	for range 20 {
		rt.Acquire(start, 1, 0, priority.Default)
	}
	for range 20 {
		rt.Done(start+300*ms, 300*ms, 1, priority.Default, false)
	}
	b, on := rt.Bound(start + 310*ms)
	assert.True(t, on)
	assert.InDelta(t, 20/0.911*0.1+1, b, 0.01, "20 ended in the last 0.911s, times 100ms, plus one")
	_, on = rt.Bound(start + 1500*ms)
	assert.False(t, on, "reading it recorded nothing")

	bbr := New(Config{Signal: CPU, Threshold: 0.5, BBR: true}, nil)
	for range 20 {
		bbr.Acquire(start, 1, 0.9, priority.Default)
		bbr.Done(start+50*ms, 50*ms, 1, priority.Default, false)
	}
	b, on = bbr.Bound(start + 60*ms)
	assert.True(t, on)
	assert.InDelta(t, 40*0.05+2, b, 1e-9, "20 in half a second times 50ms, plus one, plus one while nothing was refused")
	_, on = bbr.Bound(start + 1100*ms)
	assert.False(t, on)
}

// TestBoundsCountOnlyServedRequests: requests whose callers gave up end at
// the rate they came, not the service's: the bounds of rt and of the BBR
// check take only the served for completions, and the response times
// only theirs. Counted, the 30 abandoned here made rt's bound 5.4, not
// 2.1, and the BBR check's 26, not 8.
func TestBoundsCountOnlyServedRequests(t *testing.T) {
	start := 10 * int64(time.Second)
	for _, c := range []struct {
		cfg  Config
		host float64
		want float64
	}{
		{Config{Signal: RT, Threshold: 100}, 0, 10/0.911*0.1 + 1},
		{Config{Signal: CPU, Threshold: 0.5, BBR: true}, 0.9, 20*0.3 + 2},
	} {
		l := New(c.cfg, nil)
		for range 40 {
			l.Acquire(start, 1, 0, priority.Critical) // the CPU under the threshold
		}
		for i := range 40 {
			l.Done(start+300*ms, 300*ms, 1, priority.Critical, i >= 10)
		}
		l.Acquire(start+310*ms, 1, c.host, priority.Critical) // the BBR check: seen over the threshold
		b, on := l.Bound(start + 310*ms)
		assert.True(t, on, "%s", c.cfg.Signal)
		assert.InDelta(t, c.want, b, 0.01, "%s: 10 served, 30 abandoned", c.cfg.Signal)
		st := l.Stats(start + 310*ms)
		assert.Equal(t, int64(10), st.Complete, "%s", c.cfg.Signal)
		assert.Equal(t, 300*time.Millisecond, st.AvgRT, "%s", c.cfg.Signal)
		assert.Zero(t, l.InFlight()-1, "%s: the abandoned left the requests in flight", c.cfg.Signal)
	}
}

// TestRTBoundGrowsBackFromOne: a stall brings the bound of rt to one
// request in flight; requests that then end in 60ms, over half the
// threshold (100ms), would each give back a bound under 2 by Little's law
// alone: one more lets it grow back, to about the threshold over the
// response time times what the service can take at once (here all).
func TestRTBoundGrowsBackFromOne(t *testing.T) {
	l := New(Config{Signal: RT, Threshold: 100}, nil)
	now := 10 * int64(time.Second)
	l.Acquire(now, 1, 0, priority.Default)
	now += 300 * ms
	l.Done(now, 300*ms, 1, priority.Default, false) // over: the bound applies
	var rounds []int
	for range 60 { // 3.6s of rounds of 60ms
		n := 0
		for n < 100 {
			if ok, _ := l.Acquire(now, 1, 0, priority.Default); !ok {
				break
			}
			n++
		}
		rounds = append(rounds, n)
		now += 60 * ms
		for range n {
			l.Done(now, 60*ms, 1, priority.Default, false)
		}
	}
	t.Log(rounds)
	assert.Equal(t, 1, rounds[0])
	assert.Greater(t, rounds[len(rounds)-1], 20, "grown back")
}

// TestBBRKeepsOneWaitingUntilFlooded: the BBR check keeps room for one
// request waiting over what the service sustains until it refused a fifth
// as many requests as the rule admitted over the last second; then that
// room goes.
func TestBBRKeepsOneWaitingUntilFlooded(t *testing.T) {
	start := 10 * int64(time.Second)
	l := New(Config{Signal: CPU, Threshold: 0.5, BBR: true}, nil)
	for range 20 { // 40 per second, of 50ms: 2 in flight sustained
		l.Acquire(start, 1, 0.1, priority.Default)
		l.Done(start+50*ms, 50*ms, 1, priority.Default, false)
	}
	now := start + 60*ms
	in := 0
	for {
		ok, limit := l.Acquire(now, 1, 0.9, priority.Default)
		if !ok {
			assert.Equal(t, int64(4), limit)
			break
		}
		in++
	}
	assert.Equal(t, 4, in, "2 sustained, one more, one waiting: nothing refused yet")
	for range 4 { // 5 refused of 24 admitted
		ok, _ := l.Acquire(now, 1, 0.9, priority.Default)
		require.False(t, ok)
	}
	l.Done(now, 50*ms, 1, priority.Default, false)
	ok, limit := l.Acquire(now, 1, 0.9, priority.Default)
	assert.False(t, ok, "flooded: 3 in flight, no room for one waiting")
	assert.Equal(t, int64(3), limit)
}
