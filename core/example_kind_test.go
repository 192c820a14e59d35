package core_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sluicekit/sluice/core"
)

// A kind of rule of the Guard's own: a budget of requests per window for
// all clients together, enforced by a fixed-window flow rule, whose blocks
// are answered 503 and Unavailable.
func ExampleWithKind() {
	budget := core.KindDef{
		Kind: "budget", Doc: "requests per window, all clients together",
		Fields: []string{"limit", "window"},
		Enforce: func(r core.Rule) core.Rule {
			return core.Rule{Kind: core.KindFlow, Algorithm: core.AlgorithmFixedWindow, Limit: r.Limit, Window: r.Window}
		},
		Block: core.BlockClass{Status: 503, Problem: "https://example.com/problems/budget-spent", Title: "Budget Spent",
			GRPCCode: 14, Reason: "BUDGET_SPENT", Quota: true},
	}
	g, err := core.New(core.WithKind(budget),
		core.WithRules(core.Rule{Name: "daily", Resource: "*", Kind: "budget", Limit: 1, Window: time.Hour}))
	if err != nil {
		panic(err)
	}
	defer g.Close()
	ctx := context.Background()
	e, _ := g.Enter(ctx, "GET /report")
	e.Exit(nil)
	_, err = g.Enter(ctx, "GET /report")
	var b *core.BlockedError
	if errors.As(err, &b) {
		fmt.Println(b.Kind, b.Class().Status, b.Class().Reason)
	}
	fmt.Println(g.SetRules([]core.Rule{{Name: "daily", Resource: "*", Kind: "budget", Limit: 1, Burst: 5}}))
	// Output:
	// budget 503 BUDGET_SPENT
	// rules[0] (daily): burst does not apply to kind budget (only to kinds flow and hotspot)
}
