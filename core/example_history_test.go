package core_test

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/clock"
)

// The Guard keeps a point a second of each resource and rule from the first
// call of History on.
func ExampleGuard_History() {
	fc := clock.NewFake(0)
	g, _ := core.New(core.WithClock(fc), core.WithLogger(slog.New(slog.DiscardHandler)), core.WithRules(
		core.Rule{Name: "hello-rate", Resource: "GET /hello", Kind: core.KindFlow, Limit: 2},
	))
	defer g.Close()
	g.History(0) // start recording
	for range 3 {
		for range 5 {
			if e, err := g.Enter(context.Background(), "GET /hello"); err == nil {
				e.Exit(nil)
			}
		}
		fc.Advance(time.Second)
		g.History(0) // samples the second that ended now, not when the goroutine wakes
	}
	h := g.History(0)
	for _, r := range h.Resources {
		fmt.Printf("%s until %s: passed %v, blocked %v\n", r.Resource, h.End, r.Pass, r.Block)
	}
	for _, r := range h.Rules {
		fmt.Printf("%s: limit %v\n", r.Rule, r.Limit)
	}
	// Output:
	// GET /hello until 3s: passed [2 2 2], blocked [3 3 3]
	// hello-rate: limit [2 2 2]
}

// A hotspot rule reports the values it blocked most.
func ExampleWithTopBlockedValues() {
	g, _ := core.New(core.WithLogger(slog.New(slog.DiscardHandler)), core.WithTopBlockedValues(10), core.WithRules(
		core.Rule{Name: "per-user", Resource: "GET /items", Kind: core.KindHotspot, Param: "header:X-User-ID", Limit: 1, Window: time.Minute},
	))
	defer g.Close()
	for _, user := range []string{"mallory", "mallory", "mallory", "alice", "bob", "bob"} {
		if e, err := g.Enter(context.Background(), "GET /items", core.WithParams(core.ParamMap{"header:X-User-ID": {user}})); err == nil {
			e.Exit(nil)
		}
	}
	for _, v := range g.Snapshot().Rules[0].TopBlocked {
		fmt.Println(v.Value, v.Blocked)
	}
	// Output:
	// mallory 2
	// bob 1
}
