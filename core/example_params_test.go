package core_test

import (
	"context"
	"fmt"

	"github.com/sluicekit/sluice/core"
)

// A Guard with param sources refuses a rule whose param none of them
// supplies, here a misspelt custom param, and keeps the rules in force.
func ExampleWithParamSource() {
	perTenant := core.Rule{Name: "per-tenant", Resource: "checkout", Kind: core.KindHotspot, Param: "tenant", Limit: 1}
	guard, err := core.New(core.WithParamSource(core.CustomParams("tenant")), core.WithRules(perTenant))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer guard.Close()

	typo := perTenant
	typo.Param = "tenantt"
	fmt.Println(guard.SetRules([]core.Rule{typo}))

	params := core.WithParams(core.ParamMap{"tenant": {"acme"}})
	e, err := guard.Enter(context.Background(), "checkout", params)
	fmt.Println(err)
	e.Exit(nil)
	_, err = guard.Enter(context.Background(), "checkout", params)
	fmt.Println(err != nil)
	// Output:
	// rules[0] (per-tenant): param "tenantt" is not among the CustomParams "tenant"
	// <nil>
	// true
}
