package routecheck

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"

	"github.com/sluicekit/sluice/core/internal/resname"
	"github.com/sluicekit/sluice/core/internal/rulefields"
)

// Rule is a rule of the rule set in force: its index in the set, its name
// and resource (in canonical form), and whether it matches a resource name.
type Rule struct {
	Index          int
	Name, Resource string
	Match          func(name string) bool
}

// Checker checks the HTTP rules in force (see resname.IsHTTP) against the
// routes a service serves. It is safe for concurrent use.
type Checker struct {
	log     *slog.Logger
	methods []string // the methods a route without one serves: all
	most    int      // the rules a record lists

	mu       sync.Mutex // guards the fields below
	rules    []Rule     // the HTTP rules in force
	routes   map[string]bool
	checking bool            // once Check was called: SetRules checks then
	unrouted map[string]bool // the rules in force logged as matching no route
}

// New returns a Checker that logs to log, listing up to most rules a record.
func New(log *slog.Logger, most int) *Checker {
	return &Checker{log: log, methods: resname.Methods(), most: most, routes: map[string]bool{}, unrouted: map[string]bool{}}
}

// Add adds routes, as resource names ("GET /items/{id}", or a template
// alone for every method); blank ones are ignored.
func (c *Checker) Add(routes ...string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, r := range routes {
		if r = strings.TrimSpace(r); r != "" {
			c.routes[r] = true
		}
	}
}

// Check logs the rules in force that match no route and were not logged
// so, and makes SetRules check from now on.
func (c *Checker) Check() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.checking = true
	c.check()
}

// SetRules replaces the rules in force, whose HTTP rules are checked
// afresh: at once once Check was called.
func (c *Checker) SetRules(rules []Rule) {
	rules = slices.DeleteFunc(slices.Clone(rules), func(r Rule) bool { return !resname.IsHTTP(r.Resource) })
	c.mu.Lock()
	defer c.mu.Unlock()
	c.rules, c.unrouted = rules, map[string]bool{}
	if c.checking {
		c.check()
	}
}

// check logs the rules that match no route, not logged so yet. c.mu is held.
func (c *Checker) check() {
	if len(c.routes) == 0 {
		return
	}
	var unrouted []string
	n := 0
	for _, r := range c.rules {
		if c.unrouted[r.Name] || c.routed(r.Match) {
			continue
		}
		c.unrouted[r.Name] = true
		if n++; len(unrouted) < c.most {
			unrouted = append(unrouted, fmt.Sprintf("rules[%d] (%s): %s", r.Index, r.Name, rulefields.Quote(r.Resource)))
		}
	}
	if n == 0 {
		return
	}
	attrs := []slog.Attr{slog.Any("rules", unrouted), slog.Int("routes", len(c.routes))}
	if n > len(unrouted) {
		attrs = append(attrs, slog.Int("more", n-len(unrouted)))
	}
	c.log.LogAttrs(context.Background(), slog.LevelWarn, "sluice: rules match no route of the service; check their resources against the routes", attrs...)
}

// routed reports whether match matches a route. c.mu is held.
func (c *Checker) routed(match func(string) bool) bool {
	for r := range c.routes {
		if !strings.HasPrefix(r, "/") && match(r) ||
			strings.HasPrefix(r, "/") && slices.ContainsFunc(c.methods, func(m string) bool { return match(m + " " + r) }) {
			return true
		}
	}
	return false
}
