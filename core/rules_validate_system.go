package core

import (
	"math"

	"github.com/sluicekit/sluice/core/internal/rulefields"
)

// maxCount bounds the threshold of a system rule on a count: the largest
// whole number a float64 holds exactly.
const maxCount = 1 << 53

// checkSystem checks a system rule: its signal, threshold, strategy and
// priority param.
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
	v.checkPriority(r)
}

// checkPriority checks the priority param of a rule that sheds by priority.
func (v *validator) checkPriority(r *Rule) {
	if r.Priority == "" {
		return
	}
	if msg := rulefields.ParamProblem(r.Priority); msg != "" {
		v.add("priority", "%s", msg)
	}
}
