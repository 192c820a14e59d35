package core

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluicekit/sluice/core/clock"
	"github.com/sluicekit/sluice/core/internal/history"
	"github.com/sluicekit/sluice/core/internal/routecheck"
	"github.com/sluicekit/sluice/core/internal/sysclock"
	"github.com/sluicekit/sluice/core/internal/system"
	"github.com/sluicekit/sluice/core/store"
)

const defaultMaxResources = 10000 // WithMaxResources's default

// Guard holds a rule set, the state of its limits and the statistics of the
// resources entered through it. Guards share nothing: two Guards in one
// process never see each other's rules or counts. A Guard is safe for
// concurrent use.
type Guard struct {
	clock     clock.Clock // its rule sets keep it too; bindings read it (binding.since)
	resources *resourceTable
	stores    map[string]*storeConn // by name; fixed at New
	*owned
	settings
	kindSet kindSet // the kinds of rules the Guard knows; fixed at New

	pools *pools

	mu      sync.Mutex // serializes SetRules and AddParamSource
	rules   atomic.Pointer[ruleSet]
	sources []ParamSource // of the rules' params (see ParamSource); written under mu
}

// owned are the parts of a Guard that run its goroutines, each on a
// worker of its own (see package worker), which Close stops, or the
// runtime once the Guard is collected: none of them refers to the Guard.
type owned struct {
	reporter *reporter
	watch    *watch
	system   *system.Sampler // of the host signals of system rules
	history  *history.Recorder
	lag      *lagWatch // of the stores' latency budgets
}

// stop stops the goroutines and waits for them, the reporter's last, so
// that it delivers what the others sent.
func (o *owned) stop() {
	o.watch.worker.Close()
	o.system.Stop()
	o.history.Close()
	o.lag.stop()
	o.reporter.stop()
}

// pools are the Guard's pools of what requests need for a while. They are
// apart from the Guard: the runtime keeps every pool alive for a while,
// and would keep the Guard from being collected (see New).
type pools struct {
	// helds holds *[]held: the reservations of the requests that admit
	// asks more rules than asking keeps in place (see asking.more).
	helds sync.Pool
	// blockeds holds the *blockedAlloc of the errors Enter found to be
	// the same as one it returned before (see Guard.shared).
	blockeds sync.Pool
}

// ruleSet is one immutable generation of compiled rules.
type ruleSet struct {
	clock  clock.Clock                // the Guard's
	rules  []*ruleState               // in rule order
	beyond [8]atomic.Pointer[binding] // of names beyond the resource bound, by the rules they match (bindBeyond)
}

// ruleState is a compiled rule with its limiter.
type ruleState struct {
	rule    Rule // normalized
	pattern pattern
	lim     limiter    // of the rule's kind (see kinds.go)
	stats   *ruleStats // carried over with the limiter
	traits
	// shadow is the rule's Shadow (see asking.shadow); quiet is true for
	// a shadow rule whose quota policies are not reported (see
	// WithShadowQuotas).
	shadow, quiet bool
}

// binding is the list of rules of one rule set that apply to one resource,
// in the order they are asked: gates (breakers) first, so that an open one
// rejects before any limit is taken, and rules that make requests wait
// last, so that a request rejected by another does not take a pacing slot.
type binding struct {
	set *ruleSet
	// since(origin) reads set.clock (see read): Exit reads it through
	// the Entry's binding, which does not keep the Guard from being
	// collected, as an Entry holding the Guard would, and be larger.
	since  func(time.Time) time.Duration
	origin time.Time
	rules  []*ruleState
	// exits are the rules Exit ends a request for once (traits.exits),
	// but a gate after the first, whose reservation is in Entry.keep,
	// and the shadow rules past the bits of Entry.kept.
	exits []exitRule
	// alone is the only rule of b when its kind may decide a request by
	// itself (lone.decide): it neither waits, keeps a reservation for
	// Exit nor is a shadow rule.
	alone *ruleState
	// keeps is true when admitted requests may keep reservations for Exit
	// in Entry.keep (traits.holds; the first gate keeps its ticket in
	// Entry.brk instead).
	keeps bool
	// stored is true when a rule of b is kept in a store (traits.shared):
	// Enter reads the clock again once the rules decided, so that the
	// store's round trip is not in the request's response time.
	stored bool
	wait   bool // a rule of b may make requests wait for their turn
	params bool // a rule of b reads a request's params (see EnterLazy)
	// timed is true when Exit reads the clock for every request of b: a
	// rule of b reads when requests end (limiter.times), or the clock is
	// not the system clock. Otherwise it times a sample (see rtSampling).
	timed   bool
	matched uint64 // in set.beyond: bit i set for each rule i of set b holds
	// rejection holds the last error of a request b's rules rejected: the
	// next rejection that would be the same error returns it (see
	// Guard.blocked and Guard.shared).
	rejection atomic.Pointer[blockedAlloc]
}

// settings are the options a Guard reads as New was given them.
type settings struct {
	blockHooks              []func(context.Context, *BlockedError) // called for each block (WithBlockHook)
	topBlocked              int                                    // the k of WithTopBlockedValues, 0 without
	shadowAll, shadowQuotas bool                                   // WithShadow, WithShadowQuotas
}

// config is what the options of New set.
type config struct {
	settings
	clock        clock.Clock
	stores       map[string]store.Store
	storeBackoff time.Duration
	storeTrip    int
	storeBudget  time.Duration
	rules        []Rule
	maxResources int
	listeners    []func(BreakerEvent)
	logger       *slog.Logger
	unmatched    time.Duration
	sources      []ParamSource
	systemSource system.Source // WithSystemSource's
	kinds        []kindSpec    // WithKind's
}

// Option configures a Guard made by New.
type Option interface {
	apply(*config) error
}

type optionFunc func(*config) error

func (f optionFunc) apply(c *config) error { return f(c) }

// option returns an Option that fails with problem when bad, and else
// configures a Guard with set.
func option(bad bool, problem string, set func(*config)) Option {
	return optionFunc(func(cfg *config) error {
		if bad {
			return errors.New(problem)
		}
		set(cfg)
		return nil
	})
}

// WithClock makes the Guard read time from c instead of the system's
// monotonic clock. Tests pass a *clock.Fake.
func WithClock(c clock.Clock) Option {
	return option(c == nil, "WithClock: clock is nil", func(cfg *config) { cfg.clock = c })
}

// WithRules sets the Guard's initial rules.
func WithRules(rules ...Rule) Option {
	return option(false, "", func(cfg *config) { cfg.rules = append(cfg.rules, rules...) })
}

// WithMaxResources bounds the number of distinct resource names the Guard
// keeps statistics for (default 10000). Beyond it, new names
// still get every matching rule applied, but share the statistics of the
// resource named OverflowResource and their rules are matched on each call.
// The names rules give exactly (no '*') get resources as the rules are set, up to n more.
func WithMaxResources(n int) Option {
	return option(n < 1, fmt.Sprintf("WithMaxResources: must be >= 1, got %d", n),
		func(cfg *config) { cfg.maxResources = n })
}

// New returns a Guard configured by opts. It returns an error naming the
// problem when an option or a rule is invalid.
func New(opts ...Option) (*Guard, error) {
	cfg := config{maxResources: defaultMaxResources, unmatched: defaultUnmatchedAfter, stores: map[string]store.Store{}}
	for i, o := range opts {
		if o == nil {
			return nil, fmt.Errorf("sluice: New: option %d is nil", i)
		}
		if err := o.apply(&cfg); err != nil {
			return nil, fmt.Errorf("sluice: %w", err)
		}
	}
	g := &Guard{clock: cmp.Or[clock.Clock](cfg.clock, sysclock.New()), stores: map[string]*storeConn{}, sources: cfg.sources, pools: new(pools), settings: cfg.settings,
		kindSet: append(builtinKinds(), cfg.kinds...)}
	source := cmp.Or[system.Source](cfg.systemSource, system.NewHost("/", sysclock.New(), nil)) // or the host's signals
	g.owned = &owned{reporter: newReporter(g.clock.Now, cfg.logger, cfg.listeners),
		system: system.NewSampler(source, g.clock), history: history.NewRecorder(g.clock, g, (*Guard).historySample), lag: newLagWatch(g.clock)}
	g.watch = &watch{after: cfg.unmatched, clock: g.clock, rp: g.reporter, routes: routecheck.New(g.reporter.log, maxLoggedRules)}
	runtime.AddCleanup(g, (*owned).stop, g.owned)
	for name, s := range cfg.stores {
		g.stores[name] = newStoreConn(name, s, &cfg, g.clock, g.lag, g.reporter)
	}
	g.resources = newResourceTable(cfg.maxResources)
	g.rules.Store(&ruleSet{clock: g.clock})
	if err := g.SetRules(cfg.rules); err != nil {
		return nil, err
	}
	return g, nil
}

// Close stops the goroutines of the Guard: the ones that warn about rules
// that match no request, sample the host signals of system rules (their
// readings stay as they were) and record its history, and, once it
// delivered what was queued, the one that calls breaker listeners and logs.
// The Guard stays usable: after Close, breaker changes are no longer
// reported, and the history records a second only when History is called.
// A Guard that becomes unreachable without Close stops the goroutines when
// it is collected. Close is idempotent and returns nil.
func (g *Guard) Close() error {
	g.owned.stop()
	return nil
}

// Clock returns the Guard's clock.
func (g *Guard) Clock() clock.Clock { return g.clock }

// Rules returns the rules in force, normalized (defaults applied, names set).
func (g *Guard) Rules() []Rule {
	return mapped(g.rules.Load().rules, func(rs *ruleState) Rule { return rs.rule })
}

// SetRules validates rules and, when they are all valid, replaces the rules
// in force atomically, a rule whose name, kind, resource and param are
// unchanged keeping its state ("Rules" in the package doc), and one whose
// name, kind and resource are its statistics (RuleStats counts, the
// exporters' series); otherwise it
// returns a *RulesError naming every problem (a param no param source
// supplies is one, see ParamSource) and keeps the rules in force. Requests
// in flight when the rules change are released against the rules they
// entered under. Resources are put in canonical form (see Rule.Resource),
// and those that were not are logged at Info.
func (g *Guard) SetRules(rules []Rule) error {
	norm, err := g.kindSet.normalizeRules(rules)
	if err != nil {
		return err
	}
	if g.shadowAll {
		for i := range norm {
			norm[i].Shadow = true
		}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if problems := paramSourceProblems(norm, g.sources); len(problems) > 0 {
		return &RulesError{Problems: problems}
	}
	old := map[string]*ruleState{}
	for _, rs := range g.rules.Load().rules {
		old[rs.rule.Name] = rs
	}
	set := &ruleSet{clock: g.clock}
	var problems []Problem
	for i, r := range norm {
		rs := &ruleState{rule: r, pattern: compilePattern(r.Resource)}
		var prev limiter
		if p := old[r.Name]; p != nil && p.rule.Kind == r.Kind && p.rule.Resource == r.Resource {
			rs.stats = p.stats // the counts of the rule's series (name, kind, resource)
			if p.rule.Param == r.Param {
				prev = p.lim
			}
		} else {
			rs.stats = newRuleStats()
		}
		k := g.kindSet.find(r.Kind) // a kind of g: the rules are valid
		var err error
		if rs.lim, rs.traits, err = k.limiter(g, r, prev); err != nil {
			problems = append(problems, Problem{Index: i, Name: r.Name, Msg: err.Error()})
			continue
		}
		rs.class = cmp.Or(rs.class, &k.block)
		if r.Shadow {
			rs.shadow, rs.quiet = true, !g.shadowQuotas
			// What it holds for Exit, it holds only for the requests it
			// admitted: noted in Entry.kept or Entry.keep (asking.keep).
			rs.holds = rs.holds || rs.exits
		}
		set.rules = append(set.rules, rs)
	}
	if len(problems) > 0 {
		return &RulesError{Problems: problems}
	}
	g.resources.reserve(set.rules)
	g.watch.rulesSet(g.rules.Swap(set), set)
	var cpu, load bool // a rule reads CPU usage, the load average (traits.cpu, traits.load)
	for _, rs := range set.rules {
		cpu, load = cpu || rs.cpu, load || rs.load
	}
	g.system.Run(cpu, load)
	logNormalized(g.reporter.log, rules, norm)
	return nil
}

// bind returns the rules of set that apply to name.
func (set *ruleSet) bind(name string) *binding {
	b := &binding{set: set}
	var gates, waiting []*ruleState
	for _, rs := range set.rules {
		switch {
		case !rs.pattern.match(name):
			continue
		case rs.gate:
			gates = append(gates, rs)
		case rs.waits:
			waiting = append(waiting, rs)
		default:
			b.rules = append(b.rules, rs)
		}
		b.stored = b.stored || rs.shared
		b.params = b.params || rs.rule.Param != "" || rs.rule.Priority != ""
		b.timed = b.timed || rs.lim.times()
		rs.stats.stripes.make((*ruleStripe).init) // before a request it decides counts in them
	}
	b.rules = append(append(gates, b.rules...), waiting...)
	b.wait = len(waiting) > 0
	if sys, ok := set.clock.(*sysclock.System); ok {
		b.since, b.origin = time.Since, sys.Origin
	} else {
		b.since, b.timed = func(time.Time) time.Duration { return set.clock.Now() }, true
	}
	bit := uint8(1) // the next of Entry.kept, 0 once all are taken
	for i, rs := range b.rules {
		first := i == 0 && rs.gate // its ticket in Entry.brk
		switch {
		case !rs.exits:
			b.keeps = b.keeps || rs.holds
		case rs.shadow && bit != 0 && (first || !rs.gate):
			b.exits = append(b.exits, exitRule{rs, bit})
			bit <<= 1
		case !rs.holds || first && !rs.shadow:
			b.exits = append(b.exits, exitRule{rs: rs})
		default:
			b.keeps = true
		}
	}
	if len(b.rules) == 1 && !b.rules[0].waits && !b.rules[0].shadow && !b.rules[0].holds {
		b.alone = b.rules[0]
	}
	return b
}

// exitRule is a rule of binding.exits. A shadow rule has a bit of
// Entry.kept, set when it admitted the request (asking.keep); the others 0.
type exitRule struct {
	rs  *ruleState
	bit uint8
}

// bindBeyond returns the binding of name, a resource beyond the Guard's
// bound, whose names are too many to keep a binding each: a binding
// depends on the name only through the rules that match it, so names
// matched by the same rules share one, kept in set.beyond.
func (set *ruleSet) bindBeyond(name string) *binding {
	name = strings.ToValidUTF8(name, "\uFFFD") // as resourceTable.get names resources
	if len(set.rules) > 64 {
		return set.bind(name)
	}
	var matched uint64
	for i, rs := range set.rules {
		if rs.pattern.match(name) {
			matched |= 1 << i
		}
	}
	slot := &set.beyond[matched%uint64(len(set.beyond))]
	if b := slot.Load(); b != nil && b.matched == matched {
		return b
	}
	b := set.bind(name)
	b.matched = matched
	slot.Store(b)
	return b
}

// bindingOf returns the rules of the current rule set that apply to r,
// computing them once per rule set and resource.
func (g *Guard) bindingOf(r *resource, name string, cached bool) *binding {
	set := g.rules.Load()
	if !cached {
		return set.bindBeyond(name)
	}
	if b := r.binding.Load(); b != nil && b.set == set {
		return b
	}
	b := set.bind(r.name) // name's valid form (see resourceTable.get)
	r.stripes.make((*resStripe).init)
	b.bindTo(r)
	r.binding.Store(b)
	return b
}
