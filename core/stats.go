package core

import (
	"math"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/sluicekit/sluice/core/breaker"
	"github.com/sluicekit/sluice/core/internal/stripe"
	"github.com/sluicekit/sluice/core/window"
)

// Reasons a request is blocked for, as Totals.BlockedBy counts them: the
// kind of the rule that blocked it, ReasonFallback when a rule with a
// store blocked it by its failure policy while the store failed, or
// ReasonCancelled when its context ended while it waited for its turn
// (leaky bucket).
const (
	ReasonFlow        = string(KindFlow)
	ReasonConcurrency = string(KindConcurrency)
	ReasonHotspot     = string(KindHotspot)
	ReasonBreaker     = string(KindBreaker)
	ReasonFallback    = "fallback"
	ReasonCancelled   = "cancelled"
)

// Reasons lists the block reasons in a fixed order. It is never modified.
var Reasons = [numReasons]string{ReasonFlow, ReasonConcurrency, ReasonHotspot, ReasonBreaker, ReasonFallback, ReasonCancelled}

const numReasons = 6

// reasonCancelled is the index of ReasonCancelled in Reasons.
const reasonCancelled = 5

// reasonOf returns the index in Reasons of the reason of b.
func reasonOf(b *BlockedError) int {
	switch {
	case b.Fallback:
		return 4
	case b.Kind == KindConcurrency:
		return 1
	case b.Kind == KindHotspot:
		return 2
	case b.Kind == KindBreaker:
		return 3
	}
	return 0
}

// Reason returns why b blocked its request: one of Reasons but
// ReasonCancelled.
func (e *BlockedError) Reason() string { return Reasons[reasonOf(e)] }

// ResourceStats are the statistics of one resource: over the last second,
// and since the Guard first saw the resource.
type ResourceStats struct {
	Resource string
	// InFlight is the number of requests entered and not yet exited.
	InFlight int64
	// Pass, Block, Complete and Error count requests over the last second
	// (Pass and Block count permits, with WithCount); RT is their total
	// response time and MinRT the smallest; Peak is the highest in-flight
	// count seen. Each CPU counts the requests entering on it exactly, and
	// the count of all CPUs together is added up at every sixteenth
	// request entering on a CPU: Peak is exact while requests enter on one
	// CPU, and otherwise may miss a peak shorter than that, reading lower,
	// never higher.
	Pass, Block, Complete, Error int64
	RT, MinRT                    time.Duration
	Peak                         int64
	// Total counts since the Guard first saw the resource.
	Total Totals
}

// AvgRT returns the average response time of the requests completed over
// the last second, 0 when none completed.
func (s ResourceStats) AvgRT() time.Duration {
	if s.Complete == 0 {
		return 0
	}
	return s.RT / time.Duration(s.Complete)
}

// Totals are the counts of a resource since the Guard first saw it: they
// only grow, as Prometheus counters do. Pass, Block and Complete count
// permits (one per request unless Enter was given WithCount), Error
// requests.
type Totals struct {
	Pass, Block, Complete, Error int64
	RT                           time.Duration // total response time
	// BlockedBy counts the blocked requests by reason (see Reasons); it
	// holds the reasons with a count only.
	BlockedBy map[string]int64
}

// RuleStats are the statistics of one rule in force.
type RuleStats struct {
	Rule Rule // normalized
	// Blocked counts the requests the rule blocked over the last second,
	// BlockedTotal since the rule was first set (a rule that keeps its
	// name, kind and resource across SetRules keeps its counts).
	Blocked, BlockedTotal int64
	// Fallbacks counts the decisions the rule made by its failure policy
	// because its store failed (rules with a store).
	Fallbacks int64
	// InFlight is the number of requests holding a slot of a concurrency
	// rule.
	InFlight int64
	// Breaker is the state of a breaker rule; nil for other kinds.
	Breaker *breaker.Stats
}

// Snapshot is the state of a Guard at one time: its resources' and rules'
// statistics and its stores' health.
type Snapshot struct {
	At        time.Duration   // the Guard's clock
	Resources []ResourceStats // by name, OverflowResource last when it has counted requests
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
	s := Snapshot{At: time.Duration(now), Stores: g.Stores(), DroppedEvents: g.reporter.dropped.Load()}
	var overflow *ResourceStats
	g.resources.each(func(r *resource) {
		rs := r.snapshot(now)
		if r == g.resources.overflow {
			if rs.Total.Pass+rs.Total.Block > 0 {
				overflow = &rs
			}
			return
		}
		s.Resources = append(s.Resources, rs)
	})
	slices.SortFunc(s.Resources, func(a, b ResourceStats) int { return strings.Compare(a.Resource, b.Resource) })
	if overflow != nil {
		s.Resources = append(s.Resources, *overflow)
	}
	for _, rs := range g.rules.Load().rules {
		s.Rules = append(s.Rules, rs.snapshot(now))
	}
	return s
}

// Stats returns the statistics of the resource called name, or false when the Guard keeps
// none for it (it was never entered, or went over the resource bound and is
// counted under OverflowResource).
func (g *Guard) Stats(name string) (ResourceStats, bool) {
	var r *resource
	if name == OverflowResource {
		r = g.resources.overflow
	} else if r = (*g.resources.read.Load())[name]; r == nil {
		g.resources.mu.Lock()
		r = g.resources.dirty[name]
		g.resources.mu.Unlock()
	}
	if r == nil {
		return ResourceStats{}, false
	}
	return r.snapshot(int64(g.clock.Now())), true
}

func (r *resource) snapshot(now int64) ResourceStats {
	var s window.Snapshot
	for i := range r.stripes {
		s = s.Merge(r.stripes[i].stats.SnapshotOver(now, statInterval))
	}
	out := ResourceStats{
		Resource: r.name,
		InFlight: r.inFlight(),
		Pass:     s.Pass,
		Block:    s.Block,
		Complete: s.Complete,
		Error:    s.Error,
		RT:       time.Duration(s.RT),
		MinRT:    time.Duration(s.MinRT),
		Peak:     s.Peak,
	}
	// exited first: a request that exits between the loads counts as
	// passed, not yet completed, never completed without having passed.
	for i := range r.stripes {
		out.Total.Complete += r.stripes[i].exited.Load()
	}
	for i := range r.stripes {
		t := &r.stripes[i]
		out.Total.Pass += t.entered.Load()
		out.Total.Block += t.block.Load()
		out.Total.Error += t.errors.Load()
		out.Total.RT += time.Duration(t.rt.Load())
	}
	for i, reason := range Reasons {
		var n int64
		for j := range r.stripes {
			n += r.stripes[j].blockedBy[i].Load()
		}
		if n > 0 {
			if out.Total.BlockedBy == nil {
				out.Total.BlockedBy = map[string]int64{}
			}
			out.Total.BlockedBy[reason] = n
		}
	}
	return out
}

// ruleStats are the counts a rule keeps of itself. Only the block path and
// failure policies write them: a request a rule admits costs it nothing.
// Blocks count in the stripe of the CPU the request was blocked on (see
// stripe.Picker), so that a rule blocking on every CPU does not move one
// cache line between them.
type ruleStats struct {
	stripes   []ruleStripe
	fallbacks atomic.Int64
	// lastLog is the time of the last log of a block (see
	// BlockLogInterval), math.MinInt64 before the first; logged is the
	// blocked count then.
	lastLog atomic.Int64
	logged  atomic.Int64
}

// ruleStripe is the block counts of a rule on one CPU, on a cache line of
// its own.
type ruleStripe struct {
	blocks  *window.LeapArray // Block: requests blocked per bucket
	blocked atomic.Int64      // since the rule was first set
	_       [48]byte
}

func newRuleStats() *ruleStats {
	st := &ruleStats{stripes: make([]ruleStripe, stripe.Count())}
	for i := range st.stripes {
		st.stripes[i].blocks, _ = window.New(statBuckets, statInterval) // constants: cannot fail
	}
	st.lastLog.Store(math.MinInt64)
	return st
}

// blocked returns the requests the rule blocked over the second ending at
// now, and since it was first set.
func (st *ruleStats) blocked(now int64) (last, total int64) {
	for i := range st.stripes {
		last += st.stripes[i].blocks.Sum(now, window.Block)
		total += st.stripes[i].blocked.Load()
	}
	return last, total
}

// block counts n requests blocked at now on the CPU cpu by the rule of rs,
// and tells the reporter so once per BlockLogInterval.
func (rs *ruleState) block(g *Guard, cpu uint32, now, n int64) {
	st := rs.stats
	sp := &st.stripes[stripe.Of(cpu, len(st.stripes))]
	sp.blocks.Add(now, window.Block, n)
	sp.blocked.Add(n)
	last := st.lastLog.Load()
	if last != math.MinInt64 && now-last < int64(BlockLogInterval) || !st.lastLog.CompareAndSwap(last, now) {
		return
	}
	_, total := st.blocked(now)
	r := &blockingReport{rule: rs.rule.Name, resource: rs.rule.Resource, blocked: total - st.logged.Swap(total)}
	if last != math.MinInt64 {
		r.over = time.Duration(now - last)
	}
	g.reporter.send(report{blocking: r})
}

func (rs *ruleState) snapshot(now int64) RuleStats {
	out := RuleStats{Rule: rs.rule, Fallbacks: rs.stats.fallbacks.Load()}
	out.Blocked, out.BlockedTotal = rs.stats.blocked(now)
	if rs.conc != nil {
		out.InFlight = rs.conc.InFlight()
	}
	if rs.brk != nil {
		st := rs.brk.Stats(now)
		out.Breaker = &st
	}
	return out
}
