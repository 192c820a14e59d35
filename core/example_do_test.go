package core_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/sluicekit/sluice/core"
)

// Do puts a call to another service through a Guard in one line: a
// blocked call never runs, and the call's error counts for breakers.
func ExampleGuard_Do() {
	guard, err := core.New(core.WithRules(core.Rule{Resource: "inventory", Kind: core.KindConcurrency, Limit: 1}))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer guard.Close()

	reserve := func(ctx context.Context) error {
		// A second call while this one runs is over the limit of 1.
		err := guard.Do(ctx, "inventory", func(context.Context) error { return nil })
		var b *core.BlockedError
		fmt.Println("nested call blocked:", errors.As(err, &b))
		return nil
	}
	fmt.Println(guard.Do(context.Background(), "inventory", reserve))
	// Output:
	// nested call blocked: true
	// <nil>
}
