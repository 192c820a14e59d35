package main

import (
	"context"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/sluicekit/sluice/core"
)

// userHeader is the header the demo's clients identify themselves with.
const userHeader = "X-User-ID"

// count is a number of requests in the current second and in all.
type count struct{ now, total atomic.Int64 }

func (c *count) add() {
	c.now.Add(1)
	c.total.Add(1)
}

// take returns the count of the current second and starts the next.
func (c *count) take() int64 { return c.now.Swap(0) }

// ruleStat is what the clients saw of one rule.
type ruleStat struct {
	rule core.Rule
	// routes are the demo's routes the rule's resource matches.
	routes          []string
	passed, blocked count
	// inFlight and peak count the requests running in the handlers the rule
	// applies to (concurrency rules only).
	inFlight, peak atomic.Int64
	// values holds, for a hotspot rule on header:X-User-ID, the counts of
	// each user the demo sends as; its keys are fixed at start.
	values map[string]*valueStat
}

// valueStat counts the requests of one param value.
type valueStat struct{ passed, blocked atomic.Int64 }

// patternStat is what the clients of one traffic pattern saw.
type patternStat struct {
	def                     *pattern
	passed, blocked, failed count
}

// stats holds every count of a run. Its maps and slices are built by
// newStats and only read afterwards; the counts are atomics.
type stats struct {
	rules    []*ruleStat
	byName   map[string]*ruleStat
	patterns []*patternStat
	// unknown counts blocked answers that named no rule in force.
	unknown atomic.Int64
	// firstErr is the first failure.
	firstErr atomic.Pointer[error]
}

// newStats returns the stats of a run of rules, whose resources match the
// routes that routes maps their names to (see ruleRoutes), with the traffic
// patterns defs.
func newStats(rules []core.Rule, routes map[string][]string, defs []*pattern) *stats {
	s := &stats{byName: make(map[string]*ruleStat, len(rules))}
	for _, r := range rules {
		rs := &ruleStat{rule: r, routes: routes[r.Name]}
		if r.Kind == core.KindHotspot && isUserParam(r.Param) {
			rs.values = make(map[string]*valueStat)
			for _, d := range defs {
				for _, u := range d.users {
					rs.values[u.name] = &valueStat{}
				}
			}
		}
		s.rules = append(s.rules, rs)
		s.byName[r.Name] = rs
	}
	for _, d := range defs {
		s.patterns = append(s.patterns, &patternStat{def: d})
	}
	return s
}

// target is one kind of request the clients send: a route, as a user or
// not, and the rules that apply to it.
type target struct {
	route string
	user  string
	rules []*ruleStat
}

// target returns the target for route and user ("" for none).
func (s *stats) target(route, user string) *target {
	t := &target{route: route, user: user}
	for _, r := range s.rules {
		if applies(r, route, user != "") {
			t.rules = append(t.rules, r)
		}
	}
	return t
}

// pass counts a request of p to t that was answered 2xx: it passed every
// rule that applies to t.
func (s *stats) pass(p *patternStat, t *target) {
	p.passed.add()
	for _, r := range t.rules {
		r.passed.add()
		if v := r.values[t.user]; v != nil {
			v.passed.Add(1)
		}
	}
}

// block counts a request of p to t that the rule called rule blocked.
func (s *stats) block(p *patternStat, t *target, rule string) {
	p.blocked.add()
	r := s.byName[rule]
	if r == nil {
		s.unknown.Add(1)
		return
	}
	r.blocked.add()
	if v := r.values[t.user]; v != nil {
		v.blocked.Add(1)
	}
}

// fail counts a request of p that neither passed nor was blocked.
func (s *stats) fail(p *patternStat, err error) {
	p.failed.add()
	s.firstErr.CompareAndSwap(nil, &err)
}

// track wraps h, the handler of route, to count the requests in flight of
// the concurrency rules that apply to route.
func (s *stats) track(route string, h http.Handler) http.Handler {
	var rs []*ruleStat
	for _, r := range s.rules {
		if r.rule.Kind == core.KindConcurrency && slices.Contains(r.routes, route) {
			rs = append(rs, r)
		}
	}
	if len(rs) == 0 {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		for _, r := range rs {
			n := r.inFlight.Add(1)
			for {
				p := r.peak.Load()
				if n <= p || r.peak.CompareAndSwap(p, n) {
					break
				}
			}
		}
		defer func() {
			for _, r := range rs {
				r.inFlight.Add(-1)
			}
		}()
		h.ServeHTTP(w, req)
	})
}

// ruleRoutes returns the names of rules, each with the routes its resource
// matches. It asks a Guard of the same rules, each a shadow rule (nothing
// is blocked), about one request to each route: its Snapshot lists the
// resources each rule applied to.
func ruleRoutes(rules []core.Rule, routes ...string) (map[string][]string, error) {
	g, err := core.New(core.WithRules(rules...), core.WithShadow(), core.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		return nil, err
	}
	defer g.Close()
	for _, route := range routes {
		e, err := g.Enter(context.Background(), route)
		if err != nil {
			return nil, err
		}
		e.Exit(nil)
	}
	out := map[string][]string{}
	for _, r := range g.Snapshot().Rules {
		out[r.Rule.Name] = r.Resources
	}
	return out, nil
}

// applies reports whether the rule of r limits requests to route, sent with
// or without the X-User-ID header. A hotspot rule applies only when the
// request carries its param; the demo's requests carry no query, cookie or
// gRPC values, so rules on those never apply to them.
func applies(r *ruleStat, route string, withUser bool) bool {
	rule := r.rule
	if !slices.Contains(r.routes, route) {
		return false
	}
	if rule.Kind != core.KindHotspot {
		return true
	}
	kind, name, _ := strings.Cut(rule.Param, ":")
	switch kind {
	case "header":
		return withUser && strings.EqualFold(name, userHeader)
	case "path":
		return strings.Contains(route, "{"+name+"}") || strings.Contains(route, "{"+name+"...}")
	case "ip", "method", "host":
		return true
	default:
		return false
	}
}

// isUserParam reports whether param is the header the demo's users send.
func isUserParam(param string) bool {
	kind, name, _ := strings.Cut(param, ":")
	return kind == "header" && strings.EqualFold(name, userHeader)
}
