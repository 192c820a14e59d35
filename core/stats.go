package core

import (
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluicekit/sluice/core/breaker"
	"github.com/sluicekit/sluice/core/internal/flow"
	"github.com/sluicekit/sluice/core/internal/window"
)

// ResourceStats are the statistics of one resource: over the last second,
// and since the Guard first saw the resource.
type ResourceStats struct {
	// Resource is the resource's name, valid UTF-8: names entered with
	// invalid bytes are one resource, each run of them read as U+FFFD.
	Resource string
	// InFlight is the number of requests entered and not yet exited.
	InFlight int64
	// Pass, Block, Complete and Error count requests over the last second
	// (Pass and Block count permits, with WithCount); RT is their total
	// response time (RT/Complete the average) and MinRT the smallest; Peak is the highest in-flight
	// count seen. Each CPU counts the requests entering on it exactly, and
	// the count of all CPUs together is added up at every 64th
	// request entering on a CPU: Peak is exact while requests enter on one
	// CPU, and otherwise may miss a peak shorter than that, reading lower,
	// never higher.
	//
	// Response times (RT, MinRT, Total.RT, Total.RTHistogram) are
	// estimated from a sample when no rule of the resource reads them
	// (breaker, adaptive and system rules do) and the Guard is on the
	// system clock: the first of every 32 requests of one permit entering
	// on a CPU is timed and counts 32 times, so that Exit reads no clock for
	// the others. The estimate is within 31 requests a CPU of the true
	// count, MinRT is the least sampled time (never below the true least),
	// and a completion not timed counts in the last second's figures at
	// the time of the latest request entering on its CPU (its own start or
	// later), not at its end. On a resource without rules, Enter reads no
	// clock either for a request not timed: it counts in the last second's
	// figures at the time of the last timed request of its CPU, at most 31
	// of its requests before. Every request is timed otherwise, with
	// WithCount above 1, and with WithClock. The counts of Total are exact.
	Pass, Block, Complete, Error int64
	RT, MinRT                    time.Duration
	Peak                         int64
	// Total counts since the Guard first saw the resource.
	Total Totals
}

// Totals are the counts of a resource since the Guard first saw it: they
// only grow, as Prometheus counters do. Pass, Block and Complete count
// permits (one per request unless Enter was given WithCount), Error
// requests.
type Totals struct {
	Pass, Block, Complete, Error int64
	RT                           time.Duration // total response time
	// RTHistogram counts the completed requests by response time.
	RTHistogram RTHistogram
	// BlockedBy counts the blocked requests by reason: the name of the
	// kind of the rule that blocked them ("flow", "concurrency",
	// "hotspot", "breaker", "adaptive", "system"), ReasonFallback or
	// ReasonCancelled. It holds the reasons with a count only.
	BlockedBy map[string]int64
}

// RuleStats are the statistics of one rule in force.
type RuleStats struct {
	Rule Rule // normalized
	// Blocked counts the requests the rule blocked over the last second,
	// BlockedTotal since the rule was first set (a rule that keeps its
	// name, kind and resource across SetRules keeps its counts).
	Blocked, BlockedTotal int64
	// Shadowed counts the requests the rule would have blocked over the
	// last second, had it not been a shadow rule (Rule.Shadow), and
	// ShadowedTotal since it was first set, as BlockedTotal does: they
	// passed. A rule switched into or out of shadow keeps both counts.
	Shadowed, ShadowedTotal int64
	// Fallbacks counts the decisions the rule made by its failure policy
	// because its store failed (rules with a store).
	Fallbacks int64
	// InFlight is the number of requests holding a slot of a concurrency
	// rule.
	InFlight int64
	// Limit is the rule's limit in force and Use how much of it is taken
	// now, when HasUse (flow rules in memory, concurrency and adaptive
	// rules, system rules of signal qps or inflight, and of rt or with
	// StrategyBBR while their bound applies): for a flow rule, the
	// requests of its window (a token bucket's tokens taken, its Limit
	// then including Burst; a leaky bucket's turns taken ahead; a warm-up
	// ramp's lower limit while cold); for a concurrency or adaptive rule,
	// its requests in flight and the limit it found; for a system rule,
	// its threshold and the requests admitted over the last second (qps)
	// or in flight, or its bound and its requests in flight. Hotspot rules limit each value apart, and a
	// store's count would take a round trip: they have none.
	Limit, Use int64
	HasUse     bool
	// Breaker is the state of a breaker rule; nil for other kinds.
	Breaker *breaker.Stats
	// Adaptive is the state of an adaptive rule, the limit it found
	// included; nil for other kinds.
	Adaptive *AdaptiveStats
	// System is the state of a system rule; nil for other kinds.
	System *SystemStats
	// TopBlocked are the values of a hotspot rule's param it blocked most,
	// highest first, with WithTopBlockedValues; nil otherwise.
	TopBlocked []BlockedValue
	// Resources names, sorted, the resources the rule applied to since
	// it was first set: those requests entered while it was in force,
	// OverflowResource standing for the names beyond WithMaxResources.
	Resources []string
	// Evaluated counts the permits (requests, unless Enter was given
	// WithCount) the rule was checked against since it was first set, as
	// BlockedTotal does; a hotspot rule counts the requests it let pass
	// because they lack its param. A request blocked by an earlier rule
	// still counts for the rules after it, which are asked too, except for
	// rules with a store, which are not asked then (see Guard.Enter). The
	// permits admitted are counted through the statistics of the
	// resources (Totals.Pass) and cost the rule nothing; so, when the rule
	// is new, the few requests to its resources that had picked their
	// rules just before SetRules returned may count too, although the
	// rules before it decided them.
	Evaluated int64
	// Unmatched is true when the rule applied to no request for
	// WithUnmatchedAfter since it was set or last changed: its resource
	// likely names nothing requests are called (see Guard.Snapshot's
	// Resources for the names they get).
	Unmatched bool
}

// AdaptiveStats are the state of an adaptive rule (RuleStats.Adaptive).
type AdaptiveStats struct {
	// Limit is the limit on requests in flight in force.
	Limit int64
	// RecentRT is the average response time of the requests that ended in
	// the controller's last interval, MinRT the baseline it compares it
	// with; both 0 until the first interval ends.
	RecentRT, MinRT time.Duration
}

// SystemStats are the state of a system rule (RuleStats.System).
type SystemStats struct {
	// Pass counts the requests the rule admitted over the last second,
	// AvgRT and MinRT the average and lowest response time of those that
	// completed over it (0 when none did), not of those their callers gave
	// up on (see Entry.Exit).
	Pass         int64
	AvgRT, MinRT time.Duration
	// Host is the latest reading of the signal cpu or load.
	Host float64
}

// BlockedValue is a value of a hotspot rule's param and the permits the
// rule blocked with it, since the value was counted (see
// WithTopBlockedValues): at most Error more than the true count.
type BlockedValue struct {
	Value   string `json:"value"` // the empty string for requests without the param
	Blocked int64  `json:"blocked"`
	Error   int64  `json:"error"`
}

// Snapshot is the state of a Guard at one time: its resources' and rules'
// statistics and its stores' health.
type Snapshot struct {
	At        time.Duration   // the Guard's clock
	Resources []ResourceStats // that counted requests, by name, OverflowResource last
	Rules     []RuleStats     // in rule order
	Stores    []StoreStatus   // by name
	// DroppedEvents counts the breaker changes that listeners did not get
	// because the queue to them was full (see WithBreakerListener).
	DroppedEvents int64
}

// Snapshot returns the Guard's statistics now. It takes time proportional to
// the number of resources and rules, and allocates; it does not hold up
// requests.
func (g *Guard) Snapshot() Snapshot {
	now := int64(g.clock.Now())
	s := Snapshot{At: time.Duration(now), Stores: g.Stores(), DroppedEvents: g.reporter.dropped.Load(),
		Resources: make([]ResourceStats, 0, len(*g.resources.read.Load()))} // most of them, usually all
	entered := map[*resource]int64{}
	for _, r := range g.resources.all() {
		rs := r.snapshot(now)
		entered[r] = rs.Total.Pass
		if rs.Total.Pass+rs.Total.Block > 0 { // a rule's resource is made before it is entered (SetRules)
			s.Resources = append(s.Resources, rs)
		}
	}
	for _, rs := range g.rules.Load().rules {
		s.Rules = append(s.Rules, rs.snapshot(now, entered, g.watch.after))
	}
	return s
}

// Stats returns the statistics of the resource called name, or false when the Guard keeps
// none for it (it counted no request yet, or went over the resource bound and is
// counted under OverflowResource).
func (g *Guard) Stats(name string) (ResourceStats, bool) {
	r := g.resources.overflow
	if name != OverflowResource {
		g.resources.mu.Lock()
		r = g.resources.dirty[strings.ToValidUTF8(name, "\uFFFD")] // every resource (see resourceTable.get)
		g.resources.mu.Unlock()
	}
	if r == nil {
		return ResourceStats{}, false
	}
	rs := r.snapshot(int64(g.clock.Now()))
	return rs, rs.Total.Pass+rs.Total.Block > 0
}

func (r *resource) snapshot(now int64) ResourceStats {
	var s window.Snapshot
	for st := range r.stripes.each {
		s = s.Merge(st.stats.MarkedOver(now, statInterval))
	}
	out := ResourceStats{Resource: r.name, InFlight: r.inFlight(), Pass: s.Pass, Block: s.Block, Complete: s.Complete,
		Error: s.Error, RT: time.Duration(s.RT), MinRT: time.Duration(s.MinRT), Peak: s.Peak}
	// exited first: a request that exits between the loads counts as
	// passed, not yet completed, never completed without having passed.
	out.Total.Complete = r.exited()
	var by [maxReasons]int64
	for t := range r.stripes.each {
		out.Total.Pass = window.Plus(out.Total.Pass, t.entered.Load())
		out.Total.Error += t.errors.Load()
		out.Total.RT += time.Duration(t.rt.Load())
		t.addRTs(&out.Total.RTHistogram)
		for j := range by {
			by[j] = window.Plus(by[j], t.blockedBy[j].Load())
		}
	}
	for i, n := range by {
		if out.Total.Block = window.Plus(out.Total.Block, n); n > 0 {
			if out.Total.BlockedBy == nil {
				out.Total.BlockedBy = map[string]int64{}
			}
			out.Total.BlockedBy[blockReasons[i]] = n
		}
	}
	return out
}

// ruleStats are the counts a rule keeps of itself, written only by blocks
// and failure policies (a request a rule admits costs it nothing), in the
// stripe of the CPU the request was blocked on (see stripe.Picker), so that
// a rule blocking on every CPU does not move one cache line between them.
//
// The permits a rule evaluates are counted mostly by the resources it
// applies to: each admitted request counts in its resource (resStripe.
// entered), and every rule of the resource's binding was asked about it.
// So a rule keeps, per resource it was bound to, the resource's count of
// admitted permits then (bound), and counts in its stripes only those no
// resource counts for it: the permits not admitted (blocked, failed or
// cancelled), and those of the overflow resource, shared by names with
// different rules. Evaluated is their sum, which only grows.
type ruleStats struct {
	stripes   stripes[ruleStripe]
	fallbacks atomic.Int64
	// since is the Guard's time when the rule was set in its current form
	// (see Guard.watch), warned whether it was since logged as unmatched.
	since  atomic.Int64
	warned atomic.Bool
	// overflow is set once requests beyond the resource bound matched the
	// rule.
	overflow atomic.Bool
	mu       sync.Mutex
	bound    map[*resource]int64 // guarded by mu
	// lastLog is the time of the last log of a block (see
	// blockLogInterval), math.MinInt64 before the first; logged is the
	// blocked count then.
	lastLog      atomic.Int64
	logged       atomic.Int64
	shadowLogged atomic.Int64 // the shadow count when last logged
}

// ruleStripe is the block counts of a rule on one CPU, on a cache line of
// its own.
type ruleStripe struct {
	// blocks counts per bucket the requests blocked (Block) and the
	// requests a shadow rule would have blocked, which passed (Pass), by
	// recording blocked and shadowed (see totals).
	blocks    *window.LeapArray
	blocked   atomic.Int64 // since the rule was first set, but those of lone
	evaluated atomic.Int64 // permits evaluated that no resource counts (see ruleStats), but those of lone
	shadowed  atomic.Int64 // would have been blocked, since the rule was first set
	// lone counts the permits the rule blocked deciding alone (see
	// lone.decide), which it evaluated too: one atomic add for both
	// counts.
	lone atomic.Int64
	_    [24]byte
}

// totals returns the stripe's counts that its window records in each
// bucket (see window.NewMarked): blocked as Block, shadowed as Pass.
func (sp *ruleStripe) totals() window.Counts {
	return window.Counts{window.Block: window.Plus(sp.blocked.Load(), sp.lone.Load()), window.Pass: sp.shadowed.Load()}
}

func (sp *ruleStripe) init() {
	sp.blocks, _ = window.NewMarked(statBuckets, statInterval, sp.totals) // constants: cannot fail
}

func newRuleStats() *ruleStats {
	st := &ruleStats{bound: map[*resource]int64{}}
	st.lastLog.Store(math.MinInt64)
	return st
}

// bindTo notes that the rules of b apply to r from now on: r's admitted
// permits count for them from here (see ruleStats). bindingOf calls it
// before any request uses b.
func (b *binding) bindTo(r *resource) {
	if len(b.rules) == 0 {
		return
	}
	entered := r.entered()
	for _, rs := range b.rules {
		st := rs.stats
		st.mu.Lock()
		if _, ok := st.bound[r]; !ok {
			st.bound[r] = entered
		}
		st.mu.Unlock()
	}
}

// maxCounted is the most permits statistics count of one request: a
// request of more (core.WithCount near 2^63) counts as this many, which no
// rate rule admits at once (flow.MaxLimit).
const maxCounted = flow.MaxLimit

// count adds the n permits of a request (at most maxCounted) to the
// statistics counter c, which saturates at math.MaxInt64 rather than wrap,
// and returns its new value.
func count(c *atomic.Int64, n int64) int64 {
	v := c.Add(min(n, maxCounted))
	if v < 0 { // wrapped: counters only grow
		c.Store(math.MaxInt64)
		return math.MaxInt64
	}
	return v
}

// evaluated counts n permits evaluated on the CPU cpu by each rule of rules
// that no resource counts for them (see ruleStats).
func evaluated(rules []*ruleState, cpu uint32, n int64) {
	for _, rs := range rules {
		st := rs.stats
		sp, _ := st.stripes.of(cpu)
		count(&sp.evaluated, n)
	}
}

// overflowed counts a request of n permits to a name beyond the resource
// bound that the rules of b decided, admitted or not (not admitted: counted
// already).
func (b *binding) overflowed(cpu uint32, n int64, admitted bool) {
	for _, rs := range b.rules {
		if !rs.stats.overflow.Load() {
			rs.stats.overflow.Store(true)
		}
	}
	if admitted {
		evaluated(b.rules, cpu, n)
	}
}

// matched reports whether the rule applied to a request since it was first
// set.
func (st *ruleStats) matched() bool {
	if st.overflow.Load() {
		return true
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	return len(st.bound) > 0
}

// evaluations returns the rule's bound resources, sorted, and the permits
// it evaluated (see RuleStats.Evaluated). entered has the admitted permits
// of resources read already.
func (st *ruleStats) evaluations(entered map[*resource]int64) ([]string, int64) {
	var n int64
	for sp := range st.stripes.each {
		n = window.Plus(n, window.Plus(sp.evaluated.Load(), sp.lone.Load()))
	}
	st.mu.Lock()
	names := make([]string, 0, len(st.bound)+1)
	for r, base := range st.bound {
		names = append(names, r.name)
		e, ok := entered[r]
		if !ok {
			e = r.entered()
		}
		n = window.Plus(n, max(e-base, 0)) // r read before it was bound: it counts at the next snapshot
	}
	st.mu.Unlock()
	slices.Sort(names)
	if st.overflow.Load() {
		names = append(names, OverflowResource)
	}
	return names, n
}

// counts returns the requests the rule blocked over the second ending at
// now and since it was first set, and those it would have blocked in
// shadow, likewise.
func (st *ruleStats) counts(now int64) (blocked, blockedTotal, shadowed, shadowedTotal int64) {
	for sp := range st.stripes.each {
		last := sp.blocks.MarkedOver(now, statInterval)
		blocked, shadowed = window.Plus(blocked, last.Block), window.Plus(shadowed, last.Pass)
		blockedTotal = window.Plus(blockedTotal, window.Plus(sp.blocked.Load(), sp.lone.Load()))
		shadowedTotal = window.Plus(shadowedTotal, sp.shadowed.Load())
	}
	return blocked, blockedTotal, shadowed, shadowedTotal
}

// block counts n requests blocked at now on the CPU cpu by the rule of rs,
// or that it would have blocked (shadow: its blocks count apart); alone
// counts a block the rule decided alone, evaluated too (ruleStripe.lone).
// It tells the reporter so at most once per blockLogInterval: the count
// since the last report (none: math.MinInt64), logged being the count then.
func (rs *ruleState) block(g *Guard, cpu uint32, now, n int64, shadow, alone bool) {
	st := rs.stats
	sp, _ := st.stripes.of(cpu)
	c, logged := &sp.blocked, &st.logged
	switch {
	case shadow:
		c, logged = &sp.shadowed, &st.shadowLogged
	case alone:
		c = &sp.lone
	}
	sp.blocks.Current(now) // before the count (see window.NewMarked)
	count(c, n)
	last := st.lastLog.Load()
	if (last != math.MinInt64 && now-last < int64(blockLogInterval)) || !st.lastLog.CompareAndSwap(last, now) {
		return
	}
	_, total, _, shadowTotal := st.counts(now)
	if shadow {
		total = shadowTotal
	}
	r := &blockingReport{rule: rs.rule.Name, resource: rs.rule.Resource, blocked: total - logged.Swap(total), shadow: shadow}
	if last != math.MinInt64 {
		r.over = time.Duration(now - last)
	}
	g.reporter.send(r)
}

func (rs *ruleState) snapshot(now int64, entered map[*resource]int64, unmatchedAfter time.Duration) RuleStats {
	out := RuleStats{Rule: rs.rule, Fallbacks: rs.stats.fallbacks.Load()}
	out.Blocked, out.BlockedTotal, out.Shadowed, out.ShadowedTotal = rs.stats.counts(now)
	out.Resources, out.Evaluated = rs.stats.evaluations(entered)
	out.Unmatched = unmatchedAfter > 0 && len(out.Resources) == 0 && now-rs.stats.since.Load() >= int64(unmatchedAfter)
	rs.lim.stats(&out, now)
	return out
}
