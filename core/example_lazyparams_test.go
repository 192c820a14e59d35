package core_test

import (
	"context"
	"fmt"
	"time"

	"github.com/sluicekit/sluice/core"
)

// EnterLazy asks for a request's params only when a rule deciding it reads
// them: "search" has a flow rule only, "checkout" a rule per tenant.
func ExampleGuard_EnterLazy() {
	guard, err := core.New(core.WithRules(
		core.Rule{Name: "search", Resource: "search", Kind: core.KindFlow, Limit: 100, Window: time.Second},
		core.Rule{Name: "per-tenant", Resource: "checkout", Kind: core.KindHotspot, Param: "tenant", Limit: 10, Window: time.Second},
	))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer guard.Close()
	for _, resource := range []string{"search", "checkout"} {
		e, err := guard.EnterLazy(context.Background(), resource, func() core.Params {
			fmt.Println("params gathered for", resource)
			return core.ParamMap{"tenant": {"acme"}}
		})
		if err != nil {
			fmt.Println(err)
			continue
		}
		e.Exit(nil)
	}
	// Output:
	// params gathered for checkout
}
