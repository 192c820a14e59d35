package core

import (
	"math"
	"sync"
	"time"

	"github.com/sluicekit/sluice/core/internal/history"
)

// History is the history of a Guard's resources and rules, one point per
// second (see Guard.History). Each series ends at the second that ended at
// End: point i of a series of n points is the second ending at End -
// (n-1-i) seconds. A series is shorter than the others when its resource or
// rule came later. Counts per second are float64 because a second the
// Guard could not sample in time (a busy host) shares the counts of the
// seconds since the previous sample evenly.
type History struct {
	End       time.Duration     // the Guard's clock
	Resources []ResourceHistory // by name, OverflowResource last
	Rules     []RuleHistory     // in rule order
}

// ResourceHistory is the history of a resource: the permits passed and
// blocked, and the requests that failed, per second; the average response
// time of the requests completed in each second, and its 50th and 99th
// percentiles (from Totals.RTHistogram, within its power-of-two buckets),
// in milliseconds, NaN in a second where none completed.
type ResourceHistory struct {
	Resource                  string
	Pass, Block, Error, AvgRT []float64
	P50RT, P99RT              []float64
}

// RuleHistory is the history of a rule in force: the permits it blocked,
// would have blocked in shadow mode (Shadowed) and evaluated per second (as
// RuleStats counts them); its limit in force and its use of it at each
// second, RuleStats.Limit and Use where it has them (HasUse: flow rules in
// memory, concurrency and adaptive rules, system rules on qps or
// inflight), otherwise Rule.Limit (hotspot rules: per value) and NaN, both
// NaN for the kinds without a limit (breakers, other system rules).
type RuleHistory struct {
	Rule                                     string
	Blocked, Shadowed, Evaluated, Limit, Use []float64
}

// History returns the history the Guard keeps of its resources and rules,
// the points of the seconds that ended after after: all it keeps when after
// is at or before the time it started to record. It keeps the last 10
// minutes, one point a second, from the first call of History on
// (dashboard.New calls it): that call starts a goroutine of the Guard that
// samples its counters once a second, which Close stops; a request costs
// nothing more. Its memory is fixed: about 15 kB per resource and 12 kB
// per rule, for the resources rules name (not by a glob) and up to 1000
// others (those first seen); the requests to resources beyond count in the
// history of OverflowResource.
func (g *Guard) History(after time.Duration) History {
	g.history.Start()
	g.history.Record(g.clock.Now())
	end, res, rules := g.history.Read(after)
	return History{End: end, Resources: mapped(res, func(r history.ResourceSeries) ResourceHistory { return ResourceHistory(r) }),
		Rules: mapped(rules, func(r history.RuleSeries) RuleHistory { return RuleHistory(r) })}
}

// historySample returns what the history records of a Snapshot of g.
func (g *Guard) historySample() history.Sample {
	s := g.Snapshot()
	out := history.Sample{Overflow: history.Resource{Name: OverflowResource},
		Resources: make([]history.Resource, 0, len(s.Resources)), Rules: make([]history.Rule, 0, len(s.Rules))}
	named := sync.OnceValue(func() map[string]bool { // asked for names new to the history or beyond its bound
		m := map[string]bool{}
		for _, rs := range g.rules.Load().rules {
			m[rs.rule.Resource] = m[rs.rule.Resource] || rs.pattern.parts == nil
		}
		return m
	})
	out.Named = func(name string) bool { return named()[name] }
	for _, r := range s.Resources {
		t := r.Total
		hr := history.Resource{Name: r.Resource, Pass: t.Pass, Block: t.Block, Error: t.Error, Complete: t.Complete,
			RT: int64(t.RT), RTHist: t.RTHistogram}
		if r.Resource == OverflowResource {
			out.Overflow = hr
			continue
		}
		out.Resources = append(out.Resources, hr)
	}
	for _, rs := range s.Rules {
		r := rs.Rule
		limit, use := float64(r.Limit), math.NaN()
		switch {
		case rs.HasUse:
			limit, use = float64(rs.Limit), float64(rs.Use)
		case g.kindSet.find(r.Kind).field("limit") == nil: // breakers, system rules
			limit = math.NaN()
		}
		out.Rules = append(out.Rules, history.Rule{ID: history.RuleID{Name: r.Name, Kind: string(r.Kind), Resource: r.Resource, Param: r.Param},
			Blocked: rs.BlockedTotal, Shadowed: rs.ShadowedTotal, Evaluated: rs.Evaluated, Limit: limit, Use: use})
	}
	return out
}
