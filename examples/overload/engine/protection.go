package engine

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/sluicekit/sluice/core"
)

// Route is the backend's route, and the resource the rules protect.
const Route = "GET /work"

// PriorityHeader is the header of a request's priority level.
const PriorityHeader = "X-Priority"

// Program is the overload command with protections of its own: the
// built-in ones (none, static, adaptive, system, system-rt) and
// Protections after them, each named by -protect.
type Program struct {
	Protections []Protection
	// Trace, when set, is called as the load of each trial starts (each
	// measurement on a fresh backend: the unloaded one, every row, the
	// slowdown and priority runs); the function it returns, if not nil,
	// is called when that load ended.
	Trace func(Trial) (end func())
	// Interleave runs the table's rows load by load, each protection in
	// turn at each load, rather than protection by protection: on a host
	// whose load drifts, the protections compared at one load then run
	// within a short time of each other.
	Interleave bool
}

// Protection is a way to protect the backend in a trial: the rules of a
// Guard in front of it (sluice's net/http middleware), a handler wrapping
// it, or both (the Guard outside).
type Protection struct {
	// Name is the protection's name in -protect and the tables: neither
	// empty nor holding a comma or a space.
	Name string
	// Rules, when set, returns the rules of the trial's Guard.
	Rules func(Setup) []core.Rule
	// Wrap, when set, returns the handler of Route serving backend; a
	// trial calls it once, before its load starts.
	Wrap func(backend http.Handler) (http.Handler, error)
	// Leveled: the protection sheds by priority level (the priority run
	// runs it), its rules reading a request's level as Setup.Priority says.
	Leveled bool
}

// Setup is what a trial's rules may depend on.
type Setup struct {
	Workers int           // requests the backend serves at a time
	Service time.Duration // the backend's service time (-service)
	// Leveled: the trial sends requests of two levels in PriorityHeader.
	Leveled bool
}

// Priority is the core.Rule Priority param of a request's level in the
// trial: PriorityHeader when leveled, else none.
func (s Setup) Priority() string {
	if s.Leveled {
		return "header:" + PriorityHeader
	}
	return ""
}

// Trial is a trial whose load starts, as Program.Trace sees it.
type Trial struct {
	Protection string
	Rate       float64 // requests offered per second
	// Warmup is how long after the load starts the measured part starts.
	Warmup time.Duration
}

// SystemCPU returns protection name: a system rule on the process's CPU
// usage with the BBR check while it is over threshold (the built-in
// "system" is SystemCPU("system", 0.8)).
func SystemCPU(name string, threshold float64) Protection {
	return Protection{Name: name, Leveled: true, Rules: func(s Setup) []core.Rule {
		return []core.Rule{{Name: name, Resource: Route, Kind: core.KindSystem, Signal: core.SignalCPU,
			Threshold: threshold, Strategy: core.StrategyBBR, Priority: s.Priority()}}
	}}
}

func builtins() []Protection {
	return []Protection{
		{Name: "none"},
		{Name: "static", Rules: func(s Setup) []core.Rule {
			return []core.Rule{{Name: "static", Resource: Route, Kind: core.KindConcurrency, Limit: int64(s.Workers)}}
		}},
		{Name: "adaptive", Leveled: true, Rules: func(s Setup) []core.Rule {
			return []core.Rule{{Name: "adaptive", Resource: Route, Kind: core.KindAdaptive, Priority: s.Priority()}}
		}},
		// Sentinel's system protection as its documentation sets it: while
		// the CPU is busy, admit only what the recent throughput sustains.
		// The CPU is the process's own: the cpu backend busies it.
		SystemCPU("system", systemCPU),
		// A latency target: hold the average response time at twice the
		// backend's service time.
		{Name: "system-rt", Leveled: true, Rules: func(s Setup) []core.Rule {
			return []core.Rule{{Name: "system-rt", Resource: Route, Kind: core.KindSystem, Signal: core.SignalRT,
				Threshold: systemRT * float64(s.Service) / float64(time.Millisecond), Priority: s.Priority()}}
		}},
	}
}

// systemRT is the average response time, in multiples of the backend's
// service time, that the system-rt rule holds the requests to.
const systemRT = 2

// systemCPU is the CPU usage above which the system rule's BBR check
// applies.
const systemCPU = 0.8

// check returns an error naming the first of p's protections whose name
// is empty, holds a comma or a space, or is taken, or that has neither
// rules nor a wrapper.
func (p Program) check() error {
	var names []string
	for _, b := range builtins() {
		names = append(names, b.Name)
	}
	for i, x := range p.Protections {
		switch {
		case x.Name == "" || strings.ContainsAny(x.Name, ", \t"):
			return fmt.Errorf("protection %d: name %q: want a name with no comma or space", i, x.Name)
		case slices.Contains(names, x.Name):
			return fmt.Errorf("protection %d: name %q is taken (taken: %s)", i, x.Name, strings.Join(names, ", "))
		case x.Rules == nil && x.Wrap == nil:
			return errors.New("protection " + x.Name + ": neither Rules nor Wrap set: it would protect nothing (none does that)")
		}
		names = append(names, x.Name)
	}
	return nil
}

// all returns the built-in protections, then the program's.
func (c config) all() []Protection {
	return append(builtins(), c.prog.Protections...)
}

func (c config) protectionNames() []string {
	var names []string
	for _, p := range c.all() {
		names = append(names, p.Name)
	}
	return names
}

func (c config) protection(name string) (Protection, bool) {
	for _, p := range c.all() {
		if p.Name == name {
			return p, true
		}
	}
	return Protection{}, false
}
