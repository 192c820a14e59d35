package core

import (
	"context"

	"github.com/sluicekit/sluice/core/internal/priority"
)

// Priority is the level of a request for the rules that shed by it
// (system and adaptive rules): under overload they shed the lower levels
// first, and a level only once every lower one is shed. A request has one
// level, read once, at the first such rule that applies to it: the one
// WithPriority gave its context, else the value of the param that rule
// names (Rule.Priority), else PriorityDefault; a value other than the
// names of the levels (in any case) is PriorityDefault.
//
// An adaptive rule keeps no room idle: a level takes all of its limit but
// 10% (at least one request) for each level above that had requests in
// the last second, and passes the limit by 20% (at least two) for each
// level below that had, taking that room from the lower levels, which are
// refused until the requests in flight are back under their bound. The
// requests in flight of all levels thus stay under the limit plus 40%
// (four) with three levels coming; a lower level is refused only when the
// requests in flight are within 10% of the limit for each level above it
// (one request each), and under overload it is shed first (TestPriorityKeepsGoodputAtSmallLimits,
// TestPriorityUnderOverload: go test -run Priority ./core/).
//
// A system rule admits the requests of PriorityCritical up to its limit.
// Those of a lower level it admits only while they leave the levels above
// theirs the room those keep: each level above that had requests in the
// last second keeps 10% of the limit (at least one request), plus what
// its peak in flight over that second exceeds its requests in flight now
// (for a limit per second, what it passed in the second before beyond
// what it passed in the last). Signals of load (rt, cpu, load) shed the
// requests of a level above 90% of the threshold for each such level
// above it: with all three levels coming, sheddable above 80%, default
// above 90%, critical above the threshold. Against the bounds of the BBR
// check and of the rt signal, estimates of what the service sustains, a
// request counts only the requests in flight of its level and above, and
// has twice the bound for each lower level that had requests in the last
// second. With a single level coming, every request has the whole limit.
type Priority string

// The priority levels, highest first.
const (
	PriorityCritical  Priority = "critical"
	PriorityDefault   Priority = "default"
	PrioritySheddable Priority = "sheddable"
)

// priorityKey is the context key of WithPriority.
type priorityKey struct{}

// WithPriority returns a copy of ctx that gives the requests entered with
// it the level p (see Priority), over the param a rule names.
func WithPriority(ctx context.Context, p Priority) context.Context {
	return context.WithValue(ctx, priorityKey{}, p)
}

// priority returns the level of the request a is asking about, for the
// rule r: read once, for the first rule that sheds by level, from its
// context, else r's param (see Priority).
func (a *asking) priority(r *Rule) int {
	if !a.leveled {
		a.leveled, a.level = true, priority.Default
		p, ok := Priority(""), a.ctx != nil
		if ok {
			p, ok = a.ctx.Value(priorityKey{}).(Priority)
		}
		if !ok && r.Priority != "" && a.params != nil {
			var v string
			v, ok = a.params.Param(r.Priority, 0)
			p = Priority(v)
		}
		if ok {
			a.level = uint8(priority.Parse(string(p)))
		}
	}
	return int(a.level)
}

// priorityField is the field of the kinds that shed by priority.
func priorityField() fieldSpec {
	return fieldSpec{key: "priority", doc: "The param a request's level (critical, default, sheddable) is read from, e.g. header:X-Priority; lower levels are shed first."}
}
