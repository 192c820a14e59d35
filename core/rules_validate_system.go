package core

import (
	"math"

	"github.com/sluicekit/sluice/core/internal/rulefields"
)

// maxCount bounds the threshold of a system rule on a count: the largest
// whole number a float64 holds exactly.
const maxCount = 1 << 53

// checkSystem checks a system rule: its signal, threshold and strategy, and
// none of the fields of other kinds.
func (v *validator) checkSystem(r *Rule) {
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
	const msg = "does not apply to kind system"
	v.zero("limit", r.Limit != 0, msg+" (its limit is threshold)")
	v.zero("window", r.Window != 0, msg)
	v.zero("buckets", r.Buckets != 0, msg)
	v.noRateFields(r, msg)
	v.zero("maxRT", r.MaxRT != 0, msg)
	v.zero("minRequests", r.MinRequests != 0, msg)
	v.zero("openFor", r.OpenFor != 0, msg)
	v.zero("probes", r.Probes != 0, msg)
}

// checkPriority checks the priority param of a rule: well formed, on a
// kind that sheds by priority.
func (v *validator) checkPriority(r *Rule) {
	switch {
	case r.Priority == "":
	case r.Kind != KindSystem && r.Kind != KindAdaptive:
		v.add("priority", "only applies to kinds system and adaptive (the rules that shed under overload), got kind %s", quote(string(r.Kind)))
	default:
		if msg := rulefields.ParamProblem(r.Priority); msg != "" {
			v.add("priority", "%s", msg)
		}
	}
}
