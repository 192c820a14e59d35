package core

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/sluicekit/sluice/core/breaker"
	"github.com/sluicekit/sluice/core/clock"
	"github.com/sluicekit/sluice/core/internal/flow"
	"github.com/sluicekit/sluice/core/internal/system"
)

// systemSpec describes the system kind.
func systemSpec() kindSpec {
	cpu := map[string]any{"properties": map[string]any{"kind": map[string]any{"const": "system"}, "signal": map[string]any{"const": "cpu"}},
		"required": []string{"signal"}}
	return kindSpec{
		kind: KindSystem, doc: "sheds requests while a signal of the service's load (signal) is above threshold",
		fields: []fieldSpec{
			{key: "strategy", doc: "Signal cpu: bbr sheds only the requests above what the recent throughput sustains.", enum: []string{"bbr"}},
			{key: "threshold", doc: "The highest value of signal at which requests are admitted: cpu a fraction in (0, 1], rt milliseconds, qps and inflight requests, load a load average.",
				required: true, xmin: 0},
			{key: "signal", doc: "qps (requests admitted over the last second), inflight (requests in flight), rt (average response time, ms), cpu (CPU usage, container-aware) or load (1-minute load average).",
				required: true, enum: []string{"qps", "inflight", "rt", "cpu", "load"}},
			priorityField(),
		},
		unsetHints: map[string]string{"limit": "its limit is threshold"},
		check: func(v *validator, r *Rule) {
			th := r.Threshold
			switch r.Signal {
			case "":
				v.add("signal", "is required for kind system (qps, inflight, rt, cpu or load)")
			case SignalCPU:
				if !(th > 0 && th <= 1) {
					v.add("threshold", "must be a fraction of the CPU in (0, 1] for signal cpu, got %v", th)
				}
			case SignalQPS, SignalInFlight:
				if !(th >= 1 && th <= maxCount) || th != math.Trunc(th) {
					v.add("threshold", "must be a whole number of requests in [1, 2^53] for signal %s, got %v", r.Signal, th)
				}
			case SignalRT, SignalLoad:
				if !(th > 0) || math.IsInf(th, 1) {
					unit := "milliseconds"
					if r.Signal == SignalLoad {
						unit = "a load average"
					}
					v.add("threshold", "must be %s > 0 for signal %s, got %v", unit, r.Signal, th)
				}
			default:
				v.add("signal", "must be qps, inflight, rt, cpu or load, got %s", quote(string(r.Signal)))
			}
			switch {
			case r.Strategy == "":
			case r.Strategy != StrategyBBR:
				v.add("strategy", "must be bbr or empty for kind system, got %s", quote(string(r.Strategy)))
			case r.Signal != SignalCPU:
				v.add("strategy", "bbr only applies to signal cpu, got signal %s", quote(string(r.Signal)))
			}
			v.checkPriority(r)
		},
		schema: []any{map[string]any{"if": cpu,
			"then": map[string]any{"properties": map[string]any{"threshold": map[string]any{"maximum": 1}}},
			"else": map[string]any{"properties": map[string]any{"strategy": map[string]any{"not": map[string]any{"const": "bbr"}}}}}},
		block: shedBlock("OVERLOADED", `%s is overloaded: system rule "%s" sheds requests`, "the service is overloaded"),
		summary: func(b *strings.Builder, r *Rule) {
			fmt.Fprintf(b, "%s <= %v", r.Signal, r.Threshold)
			if r.Strategy != "" {
				fmt.Fprintf(b, ", %s", r.Strategy)
			}
		},
		limiter: func(g *Guard, r Rule, prev limiter) (limiter, traits, error) {
			c := system.Config{Signal: system.Signal(r.Signal), Threshold: r.Threshold, BBR: r.Strategy == StrategyBBR}
			if c.Signal.Host() {
				if err := g.system.Check(c.Signal); err != nil {
					return nil, traits{}, fmt.Errorf("signal %s cannot be read on this host: %w", r.Signal, err)
				}
			}
			var p *system.Limiter
			if k, ok := prev.(*systemKind); ok {
				p = k.l
			}
			fixed := c.Signal == system.InFlight || c.Signal == system.QPS // only a threshold on a count is below n for good
			over := func(n int64) bool { return fixed && float64(n) > c.Threshold }
			t := traits{exits: true, cpu: c.Signal == system.CPU, load: c.Signal == system.Load, over: over}
			return &systemKind{system.New(c, p), g.system, g.clock}, t, nil
		},
	}
}

const maxCount = 1 << 53 // bounds a system rule's threshold on a count: the largest integer a float64 holds exactly

// StrategyBBR is the Strategy of a system rule of signal cpu that, while
// CPU usage is over its threshold (and for a second after), still admits
// requests as long as those in flight stay at most the highest completion
// rate of the last second (per second, from its busiest half second)
// times the lowest response time of the last 10 seconds, plus one, at
// least 2 once a request ended in those 10 seconds, and whenever none is
// in flight: Sentinel's BBR check, which keeps the throughput the service
// showed it has. Until it refused a fifth as many requests as the rule
// admitted in the last second (a load about the capacity, which comes in
// bursts), one more may wait. On a CPU-bound service of 2 CPUs it then
// keeps 2 in flight, as Sentinel's does, and refuses fewer at 1x
// (examples/overload's CPU-bound benchmark).
// Before 2 workers of 20ms with the host saturated, open loop at 1x-10x
// their capacity, 1s deadline, it serves at least 90% of it (measured
// 100%) with a p99 at most 3x the unloaded one (measured 1.0x-1.9x; fake
// clock: go test -run CapacityUnderOpenLoad -v ./core/). With priorities,
// a request counts against the bound only the requests in flight of its
// level and above, and has twice the bound for each lower level that had
// requests in the last second: at 3x the capacity of a service of 2ms
// requests, a sixth of them critical, the rest default and sheddable, it
// sheds under 1% of the critical requests (measured under 0.01%), 61% of
// the default and 99.6% of the sheddable ones, the service busy
// (TestSystemRuleBBRShedsByPriorityUnderOverload).
const StrategyBBR breaker.Strategy = "bbr"

// SystemSource supplies the host signals of system rules: CPU reads the
// CPU usage since its previous call, a fraction in [0, 1]; Load the
// 1-minute load average. The Guard calls them from one goroutine at a
// time: once when a rule needing the signal is set (an error refuses the
// rule), then every half second while such a rule is in force.
type SystemSource interface {
	CPU() (float64, error)
	Load() (float64, error)
}

// WithSystemSource makes the Guard read the host signals of system rules
// from s instead of the host's files: tests give a fake one.
func WithSystemSource(s SystemSource) Option {
	return option(s == nil, "WithSystemSource: source is nil", func(cfg *config) { cfg.systemSource = s })
}

// systemKind is a system rule.
type systemKind struct {
	l      *system.Limiter
	sample *system.Sampler // of the Guard
	clock  clock.Clock     // of the Guard, for undo
}

func (k *systemKind) ask(a *asking, rs *ruleState) error {
	sig := k.l.Config().Signal
	var host float64
	if sig.Host() {
		host = k.sample.Value(sig)
	}
	level := a.priority(&rs.rule)
	ok, limit := k.l.Acquire(a.now, a.n, host, level)
	askSlot(a, rs, ok, systemRejection{k, limit}, uint8(level))
	return nil
}

// systemRejection is a rejection of k under limit (see system.Limiter.Acquire).
type systemRejection struct {
	k     *systemKind
	limit int64
}

// rejection is the decision of the rule when it rejects a request: retry
// once the signal may have changed, when the window moved on (qps), a
// request ended (inflight, the BBR check) or the host was sampled again
// (cpu, load).
func (r systemRejection) rejection() flow.Decision {
	k := r.k
	d := flow.Decision{Limit: r.limit, Remaining: max(r.limit-k.l.InFlight(), 0), RetryAfter: 100 * time.Millisecond}
	switch k.l.Config().Signal {
	case system.CPU, system.Load:
		d.RetryAfter = system.Every
	case system.InFlight:
		d.RetryAfter = max(k.l.Stats(int64(k.clock.Now())).AvgRT, time.Millisecond)
	}
	return d
}

func (k *systemKind) undo(h held, _ uint32, n int64) {
	k.l.Release(int64(k.clock.Now()), n, int(h.level))
}

func (k *systemKind) exit(_ hold, end ending) {
	k.l.Done(end.now, end.rt, end.n, int(end.level), end.gone)
}

func (*systemKind) times() bool { return true }

func (k *systemKind) stats(out *RuleStats, now int64) {
	out.InFlight = k.l.InFlight()
	st := k.l.Stats(now)
	sig := k.l.Config().Signal
	s := &SystemStats{Pass: st.Pass, AvgRT: st.AvgRT, MinRT: st.MinRT}
	switch {
	case sig.Host():
		s.Host = k.sample.Value(sig)
	case sig == system.InFlight:
		out.Limit, out.Use, out.HasUse = int64(k.l.Config().Threshold), out.InFlight, true
	case sig == system.QPS:
		out.Limit, out.Use, out.HasUse = int64(k.l.Config().Threshold), st.Pass, true
	}
	if b, ok := k.l.Bound(now); ok {
		out.Limit, out.Use, out.HasUse = int64(b), out.InFlight, true
	}
	out.System = s
}
