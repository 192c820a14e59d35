package core_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/clock"
)

// A request enters the Guard, does its work and exits; a blocked one
// learns which rule blocked it and when to retry. A fake clock makes the
// retry time exact.
func Example() {
	guard, err := core.New(core.WithClock(clock.NewFake(0)), core.WithLogger(slog.New(slog.DiscardHandler)), core.WithRules(
		core.Rule{Name: "per-user", Resource: "GET /items/{id}", Kind: core.KindHotspot,
			Param: "header:X-User-ID", Limit: 2, Window: 10 * time.Second},
	))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer guard.Close()

	alice := core.WithParams(core.ParamMap{"header:X-User-ID": {"alice"}})
	for range 3 {
		e, err := guard.Enter(context.Background(), "GET /items/{id}", alice)
		var b *core.BlockedError
		if errors.As(err, &b) {
			fmt.Printf("blocked by %s (%d per %s): retry in %s\n", b.Rule, b.Limit, b.Window, b.RetryAfter)
			continue
		}
		fmt.Println("served")
		e.Exit(nil)
	}
	// Output:
	// served
	// served
	// blocked by per-user (2 per 10s): retry in 5s
}
