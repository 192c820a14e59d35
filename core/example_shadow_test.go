package core_test

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/clock"
)

// A shadow rule shows what a limit would do before it does it: every
// request passes, and the rule counts those it would have blocked.
func ExampleWithShadow() {
	g, err := core.New(core.WithClock(clock.NewFake(time.Hour)), core.WithLogger(slog.New(slog.DiscardHandler)),
		core.WithRules(core.Rule{Name: "trial", Resource: "GET /items", Kind: core.KindFlow, Limit: 2, Shadow: true}))
	if err != nil {
		panic(err)
	}
	defer g.Close()
	passed := 0
	for range 5 {
		e, err := g.Enter(context.Background(), "GET /items")
		if err == nil {
			passed++
		}
		e.Exit(nil)
	}
	st := g.Snapshot().Rules[0]
	fmt.Printf("passed %d, would have blocked %d, blocked %d\n", passed, st.ShadowedTotal, st.BlockedTotal)

	// Enforced from now on, by a reload that keeps the rule's counts.
	r := st.Rule
	r.Shadow = false
	if err := g.SetRules([]core.Rule{r}); err != nil {
		panic(err)
	}
	_, err = g.Enter(context.Background(), "GET /items")
	fmt.Println(err)
	// Output:
	// passed 5, would have blocked 3, blocked 0
	// sluice: GET /items blocked by flow rule "trial": limit 2 per 1s, retry after 1s
}
