package core_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/clock"
)

// A rule reports the resources it applied to and the requests it was
// checked against; one that applies to nothing for a while is flagged.
func ExampleRuleStats() {
	fc := clock.NewFake(0)
	g, _ := core.New(core.WithClock(fc), core.WithLogger(slog.New(slog.DiscardHandler)), core.WithRules(
		core.Rule{Name: "items", Resource: "GET /items/*", Kind: core.KindFlow, Limit: 2},
		core.Rule{Name: "typo", Resource: "GET /itmes/*", Kind: core.KindFlow, Limit: 2},
	))
	defer g.Close()
	for _, res := range []string{"GET /items/{id}", "GET /items/{id}", "GET /items/{id}", "GET /items/{id}/tags"} {
		if e, err := g.Enter(context.Background(), res); err == nil {
			e.Exit(nil)
		}
	}
	fc.Advance(5 * time.Minute)
	for _, r := range g.Snapshot().Rules {
		fmt.Printf("%s: evaluated %d, blocked %d, resources %q, unmatched %v\n", r.Rule.Name, r.Evaluated, r.BlockedTotal, r.Resources, r.Unmatched)
	}
	// Output:
	// items: evaluated 4, blocked 2, resources ["GET /items/{id}" "GET /items/{id}/tags"], unmatched false
	// typo: evaluated 0, blocked 0, resources [], unmatched true
}

// A service whose router can list its routes gives them to the Guard,
// which warns about the rules that match none of them. The HTTP adapters
// do it themselves (sluicegin.WithRoutes, sluiceecho, sluicehttp.Handle).
func ExampleGuard_CheckRoutes() {
	noTime := func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}
	log := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{ReplaceAttr: noTime}))
	g, _ := core.New(core.WithLogger(log), core.WithUnmatchedAfter(time.Hour), core.WithRules(
		core.Rule{Name: "items", Resource: "GET /items/{id}", Kind: core.KindFlow, Limit: 100},
		core.Rule{Name: "typo", Resource: "GET /itmes/{id}", Kind: core.KindFlow, Limit: 100},
	))
	defer g.Close()
	g.AddRoutes("GET /items/{id}", "POST /items")
	g.CheckRoutes()
	// Output:
	// level=WARN msg="sluice: rules match no route of the service; check their resources against the routes" rules="[rules[1] (typo): \"GET /itmes/{id}\"]" routes=2
}
