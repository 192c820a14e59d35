package breaker

import (
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const ms = int64(time.Millisecond)

// recorder collects a breaker's transitions.
type recorder struct {
	mu  sync.Mutex
	got []Transition
}

func (r *recorder) notify(t Transition) {
	r.mu.Lock()
	r.got = append(r.got, t)
	r.mu.Unlock()
}

func (r *recorder) states() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var parts []string
	for _, t := range r.got {
		parts = append(parts, string(t.From)+">"+string(t.To))
	}
	return strings.Join(parts, " ")
}

func mustNew(t *testing.T, cfg Config, rec *recorder) *Breaker {
	t.Helper()
	var notify func(Transition)
	if rec != nil {
		notify = rec.notify
	}
	b, err := New(cfg, nil, notify)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// step is one request of a table: at At, Allow is asked; if it lets the
// request through, Done reports RT and Failed at At+RT.
type step struct {
	at     int64 // ms
	rt     int64 // ms
	failed bool
	// want
	allowed bool
	probe   bool
	state   State // after Done
}

func run(t *testing.T, b *Breaker, steps []step) {
	t.Helper()
	for i, s := range steps {
		now := s.at * ms
		tk, retry, ok := b.Allow(now)
		if ok != s.allowed {
			t.Fatalf("step %d (t=%dms): Allow = %v (retry %s), want %v; stats %+v", i, s.at, ok, retry, s.allowed, b.Stats(now))
		}
		if ok && tk.Probe() != s.probe {
			t.Fatalf("step %d: probe = %v, want %v", i, tk.Probe(), s.probe)
		}
		if !ok && retry <= 0 {
			t.Fatalf("step %d: rejected with retry %s, want > 0", i, retry)
		}
		if ok {
			b.DoneOn(0, now+s.rt*ms, tk, time.Duration(s.rt*ms), s.failed)
		}
		if got := b.Stats(now + s.rt*ms).State; got != s.state {
			t.Fatalf("step %d (t=%dms): state %s, want %s", i, s.at, got, s.state)
		}
	}
}

func TestErrorRatio(t *testing.T) {
	rec := &recorder{}
	b := mustNew(t, Config{Strategy: ErrorRatio, Threshold: 0.5, MinRequests: 4, Window: time.Second, Buckets: 10, OpenFor: time.Second}, rec)
	run(t, b, []step{
		{at: 0, failed: true, allowed: true, state: Closed},    // 1 of 1 bad, but under minRequests
		{at: 10, failed: true, allowed: true, state: Closed},   // 2 of 2
		{at: 20, allowed: true, state: Closed},                 // 2 of 3
		{at: 30, allowed: true, state: Closed},                 // 2 of 4: a good outcome never trips
		{at: 40, allowed: true, state: Closed},                 // 2 of 5
		{at: 50, failed: true, allowed: true, state: Open},     // 3 of 6 = 0.5: trips
		{at: 60, allowed: false, state: Open},                  // open: rejected
		{at: 1049, allowed: false, state: Open},                // until 50+1000
		{at: 1050, allowed: true, probe: true, state: Closed},  // half-open, probe succeeds: closed
		{at: 1060, failed: true, allowed: true, state: Closed}, // fresh statistics: 1 of 1
	})
	if got, want := rec.states(), "closed>open open>half-open half-open>closed"; got != want {
		t.Fatalf("transitions %q, want %q", got, want)
	}
	if tr := rec.got[0]; tr.Requests != 6 || tr.Bad != 3 || tr.At != 50*ms || !strings.Contains(tr.Reason, "error ratio 0.5") {
		t.Fatalf("trip transition %+v", tr)
	}
}

func TestErrorRatioWindowSlides(t *testing.T) {
	b := mustNew(t, Config{Strategy: ErrorRatio, Threshold: 0.5, MinRequests: 2, Window: time.Second, Buckets: 10}, nil)
	run(t, b, []step{
		{at: 0, failed: true, allowed: true, state: Closed},
		// 1s later the first failure has left the window: 1 of 1 is
		// under minRequests.
		{at: 1000, failed: true, allowed: true, state: Closed},
		{at: 1100, failed: true, allowed: true, state: Open},
	})
}

func TestErrorCount(t *testing.T) {
	b := mustNew(t, Config{Strategy: ErrorCount, Threshold: 3, MinRequests: 1, Window: time.Second, Buckets: 10, OpenFor: 500 * time.Millisecond}, nil)
	steps := []step{}
	for i := range 20 { // many good requests: the count, not a ratio, trips
		steps = append(steps, step{at: int64(i), allowed: true, state: Closed})
	}
	steps = append(steps,
		step{at: 100, failed: true, allowed: true, state: Closed},
		step{at: 200, failed: true, allowed: true, state: Closed},
		step{at: 300, failed: true, allowed: true, state: Open},
		step{at: 799, allowed: false, state: Open},
		step{at: 800, failed: true, allowed: true, probe: true, state: Open}, // probe fails: open again
		step{at: 801, allowed: false, state: Open},
		step{at: 1300, allowed: true, probe: true, state: Closed},
	)
	run(t, b, steps)
}

func TestSlowRatio(t *testing.T) {
	b := mustNew(t, Config{Strategy: SlowRatio, Threshold: 0.6, MaxRT: 100 * time.Millisecond, MinRequests: 5, Window: 10 * time.Second, Buckets: 10, OpenFor: time.Second}, nil)
	run(t, b, []step{
		{at: 0, rt: 100, allowed: true, state: Closed},               // exactly MaxRT is not slow
		{at: 10, rt: 101, allowed: true, state: Closed},              // slow
		{at: 20, rt: 5, failed: true, allowed: true, state: Closed},  // an error is not slow
		{at: 30, rt: 500, allowed: true, state: Closed},              // 2 of 4
		{at: 40, rt: 500, allowed: true, state: Open},                // 3 of 5 = 0.6
		{at: 1540, rt: 150, allowed: true, probe: true, state: Open}, // slow probe: open again
		{at: 2690, rt: 10, allowed: true, probe: true, state: Closed},
	})
}

func TestProbes(t *testing.T) {
	rec := &recorder{}
	b := mustNew(t, Config{Strategy: ErrorRatio, Threshold: 1, MinRequests: 1, Window: time.Second, Buckets: 1, OpenFor: time.Second, Probes: 3}, rec)
	tk, _, _ := b.Allow(0)
	b.DoneOn(0, 0, tk, 0, true)
	if b.Stats(0).State != Open {
		t.Fatal("not open after a failure with threshold 1 and minRequests 1")
	}
	now := 1000 * ms
	var probes []Ticket
	for range 3 {
		tk, _, ok := b.Allow(now)
		if !ok || !tk.Probe() {
			t.Fatalf("probe %d: ok %v probe %v", len(probes), ok, tk.Probe())
		}
		probes = append(probes, tk)
	}
	if _, retry, ok := b.Allow(now); ok || retry != time.Second {
		t.Fatalf("4th request while 3 probes are out: ok %v retry %s, want rejected, retry 1s (the probes' deadline)", ok, retry)
	}
	// A probe given back (a later rule rejected it) frees its place.
	b.Undo(probes[2])
	tk, _, ok := b.Allow(now)
	if !ok || !tk.Probe() {
		t.Fatal("no probe after Undo")
	}
	probes[2] = tk
	// Two succeed: still half-open; a request that is not a probe and
	// was let through before the trip is ignored.
	b.DoneOn(0, now, probes[0], 0, false)
	b.DoneOn(0, now, probes[1], 0, false)
	if s := b.Stats(now).State; s != HalfOpen {
		t.Fatalf("after 2 of 3 probes: %s", s)
	}
	b.DoneOn(0, now, probes[2], 0, false)
	if s := b.Stats(now).State; s != Closed {
		t.Fatalf("after 3 of 3 probes: %s", s)
	}
	// A late report of an old probe changes nothing.
	b.DoneOn(0, now, probes[0], 0, true)
	if s := b.Stats(now).State; s != Closed {
		t.Fatalf("stale probe reopened the breaker: %s", s)
	}
	if got, want := rec.states(), "closed>open open>half-open half-open>closed"; got != want {
		t.Fatalf("transitions %q, want %q", got, want)
	}
}

func TestProbeTimeout(t *testing.T) {
	rec := &recorder{}
	b := mustNew(t, Config{Strategy: ErrorCount, Threshold: 1, MinRequests: 1, Window: time.Second, Buckets: 1, OpenFor: time.Second}, rec)
	tk, _, _ := b.Allow(0)
	b.DoneOn(0, 0, tk, 0, true)
	probe, _, ok := b.Allow(1000 * ms)
	if !ok || !probe.Probe() {
		t.Fatal("no probe")
	}
	if _, _, ok := b.Allow(1999 * ms); ok {
		t.Fatal("second request let through while the probe is out")
	}
	// The probe hangs past OpenFor: the breaker opens again.
	if _, retry, ok := b.Allow(2000 * ms); ok || retry != time.Second {
		t.Fatalf("at the probe's deadline: ok %v retry %s, want rejected for 1s", ok, retry)
	}
	b.DoneOn(0, 2500*ms, probe, 0, false) // too late: ignored
	if s := b.Stats(2500 * ms); s.State != Open || s.Trips != 2 {
		t.Fatalf("stats %+v, want open, 2 trips", s)
	}
	if got, want := rec.states(), "closed>open open>half-open half-open>open"; got != want {
		t.Fatalf("transitions %q, want %q", got, want)
	}
}

func TestOutcomesOfAnEarlierPeriodIgnored(t *testing.T) {
	b := mustNew(t, Config{Strategy: ErrorCount, Threshold: 2, MinRequests: 1, Window: 10 * time.Second, Buckets: 10, OpenFor: time.Second}, nil)
	old, _, _ := b.Allow(0) // a slow request that outlives a whole cycle
	for _, at := range []int64{1, 2} {
		tk, _, _ := b.Allow(at * ms)
		b.DoneOn(0, at*ms, tk, 0, true)
	}
	p, _, _ := b.Allow(1002 * ms)
	b.DoneOn(0, 1002*ms, p, 0, false) // closed again, statistics afresh
	b.DoneOn(0, 1003*ms, old, 0, true)
	if s := b.Stats(1003 * ms); s.State != Closed || s.Requests != 0 || s.Bad != 0 {
		t.Fatalf("stats %+v: the old request counted in the new period", s)
	}
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{}, "strategy is required"},
		{Config{Strategy: "latency"}, `strategy must be slow-ratio, error-ratio or error-count, got "latency"`},
		{Config{Strategy: ErrorRatio, Threshold: 1.5}, "threshold must be a ratio in (0, 1]"},
		{Config{Strategy: ErrorRatio, Threshold: 0}, "threshold must be a ratio in (0, 1]"},
		{Config{Strategy: ErrorCount, Threshold: 2.5}, "threshold must be a whole number of errors >= 1"},
		{Config{Strategy: SlowRatio, Threshold: 0.5}, "maxRT must be > 0 with strategy slow-ratio"},
		{Config{Strategy: ErrorRatio, Threshold: 0.5, MaxRT: time.Second}, "maxRT only applies to strategy slow-ratio"},
		{Config{Strategy: ErrorRatio, Threshold: 0.5, Window: -1}, "window must be > 0"},
		{Config{Strategy: ErrorRatio, Threshold: 0.5, Window: time.Second, Buckets: 7}, "buckets window 1s is not a whole number"},
		{Config{Strategy: ErrorRatio, Threshold: 0.5, MinRequests: -1}, "minRequests must be >= 1, got -1"},
		{Config{Strategy: ErrorRatio, Threshold: 0.5, OpenFor: -time.Second}, "openFor must be > 0"},
		{Config{Strategy: ErrorRatio, Threshold: 0.5, Probes: 1001}, "probes must be between 1 and 1000, got 1001"},
	} {
		_, err := New(tc.cfg, nil, nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%+v) = %v, want an error containing %q", tc.cfg, err, tc.want)
		}
	}
	if _, err := New(Config{Strategy: ErrorCount, Threshold: 5}, nil, nil); err != nil {
		t.Fatal(err)
	}
}

func TestNewCarriesStateOver(t *testing.T) {
	cfg := Config{Strategy: ErrorCount, Threshold: 1, MinRequests: 1, Window: time.Second, Buckets: 10, OpenFor: time.Second}
	b := mustNew(t, cfg, nil)
	if same, _ := New(cfg, b, nil); same != b {
		t.Fatal("an unchanged config did not keep the breaker")
	}
	tk, _, _ := b.Allow(0)
	b.DoneOn(0, 0, tk, 0, true)
	cfg.OpenFor = 10 * time.Second
	nb, err := New(cfg, b, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s := nb.Stats(500 * ms); s.State != Open || s.RetryAfter != 500*time.Millisecond || s.Requests != 1 {
		t.Fatalf("carried over: %+v, want open for 500ms more with its window", s)
	}
}

// TestProbesNeverExceeded lets 64 goroutines race for the probes of a
// half-open breaker, again and again: never more than Probes through.
func TestProbesNeverExceeded(t *testing.T) {
	const probes = 3
	b := mustNew(t, Config{Strategy: ErrorCount, Threshold: 1, MinRequests: 1, Window: time.Second, Buckets: 1, OpenFor: time.Second, Probes: probes}, nil)
	for round := range 50 {
		now := int64(round) * 10 * int64(time.Second)
		tk, _, ok := b.Allow(now)
		if !ok || tk.Probe() {
			t.Fatalf("round %d: closed breaker rejected or gave a probe", round)
		}
		b.DoneOn(0, now, tk, 0, true) // open
		now += int64(time.Second)
		var let atomic.Int64
		var wg sync.WaitGroup
		tickets := make(chan Ticket, 64)
		for range 64 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if tk, _, ok := b.Allow(now); ok {
					let.Add(1)
					tickets <- tk
				}
			}()
		}
		wg.Wait()
		close(tickets)
		if n := let.Load(); n != probes {
			t.Fatalf("round %d: %d requests through a half-open breaker with %d probes", round, n, probes)
		}
		for tk := range tickets {
			b.DoneOn(0, now, tk, 0, false)
		}
		if s := b.Stats(now).State; s != Closed {
			t.Fatalf("round %d: %s after all probes succeeded", round, s)
		}
	}
}

// TestOutcomesOnSeveralCPUsAddUp: outcomes reported from different CPUs
// count in their own statistics, and the breaker trips on their sum.
func TestOutcomesOnSeveralCPUsAddUp(t *testing.T) {
	b := mustNew(t, Config{Strategy: ErrorRatio, Threshold: 0.5, MinRequests: 8, Window: time.Second, Buckets: 10, OpenFor: time.Second}, nil)
	done := func(cpu uint32, at int64, failed bool) {
		tk, _, ok := b.Allow(at)
		require.True(t, ok, "at %d", at)
		b.DoneOn(cpu, at, tk, 0, failed)
	}
	for i := range 4 {
		done(uint32(i), int64(i), false)
	}
	for i := range 3 {
		done(uint32(i+4), int64(10+i), true)
	}
	st := b.Stats(20)
	assert.Equal(t, Stats{State: Closed, Requests: 7, Bad: 3}, st, "the sum of every CPU's counts")
	done(7, 20, true) // 4 bad of 8, on 8 CPUs: the ratio of the sum trips it
	assert.Equal(t, Open, b.Stats(21).State)
}
