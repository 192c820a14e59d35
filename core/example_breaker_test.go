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

func ExampleWithBreakerListener() {
	fc := clock.NewFake(0)
	changes := make(chan core.BreakerEvent, 8)
	g, err := core.New(core.WithClock(fc),
		core.WithLogger(slog.New(slog.DiscardHandler)),
		core.WithBreakerListener(func(e core.BreakerEvent) { changes <- e }),
		core.WithRules(core.Rule{
			Name: "payments", Resource: "POST /pay", Kind: core.KindBreaker,
			Strategy: "error-count", Threshold: 3, MinRequests: 1, OpenFor: 10 * time.Second,
		}))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer g.Close()
	ctx := context.Background()
	for range 3 {
		e, err := g.Enter(ctx, "POST /pay")
		if err == nil {
			e.Exit(errors.New("upstream timeout")) // the handler's outcome
		}
	}
	ev := <-changes
	fmt.Printf("%s: %s -> %s (%s)\n", ev.Rule, ev.From, ev.To, ev.Reason)
	_, err = g.Enter(ctx, "POST /pay")
	fmt.Println(err)
	// Output:
	// payments: closed -> open (3 errors >= 3 in 10s (3 requests))
	// sluice: POST /pay blocked by breaker rule "payments": circuit open, retry after 10s
}

func ExampleGuard_Snapshot() {
	fc := clock.NewFake(0)
	g, err := core.New(core.WithClock(fc), core.WithLogger(slog.New(slog.DiscardHandler)),
		core.WithRules(core.Rule{Name: "hello-rate", Resource: "GET /hello", Kind: core.KindFlow, Limit: 3}))
	if err != nil {
		fmt.Println(err)
		return
	}
	for range 5 {
		if e, err := g.Enter(context.Background(), "GET /hello"); err == nil {
			fc.Advance(20 * time.Millisecond)
			e.Exit(nil)
		}
	}
	s := g.Snapshot()
	for _, r := range s.Resources {
		fmt.Printf("%s: passed %d, blocked %d (%v), average RT %s\n", r.Resource, r.Pass, r.Block, r.Total.BlockedBy, r.RT/time.Duration(max(r.Complete, 1)))
	}
	for _, r := range s.Rules {
		fmt.Printf("rule %s blocked %d in the last second\n", r.Rule.Name, r.Blocked)
	}
	// Output:
	// GET /hello: passed 3, blocked 2 (map[flow:2]), average RT 20ms
	// rule hello-rate blocked 2 in the last second
}
