package core_test

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/sluicekit/sluice/core"
)

// constantCPU is a SystemSource of a CPU always at the same usage.
type constantCPU float64

func (c constantCPU) CPU() (float64, error) { return float64(c), nil }
func (constantCPU) Load() (float64, error)  { return 0, nil }

// A system rule sheds every request while the CPU is above its threshold,
// here 80%; the Guard reads the CPU every half second, off the request
// path (a fake source here, the host's by default).
func ExampleWithSystemSource() {
	g, err := core.New(core.WithSystemSource(constantCPU(0.95)),
		core.WithLogger(slog.New(slog.DiscardHandler)),
		core.WithRules(core.Rule{Name: "cpu", Resource: "*", Kind: core.KindSystem, Signal: core.SignalCPU, Threshold: 0.8}))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer g.Close()
	_, err = g.Enter(context.Background(), "GET /items")
	fmt.Println(err)
	// Output: sluice: GET /items blocked by system rule "cpu": the service is overloaded, retry after 500ms
}

// Under overload, lower levels are shed first: with critical requests
// holding 3 of 4 slots, a default request would leave them no headroom,
// while another critical one takes the last slot.
func ExampleWithPriority() {
	g, err := core.New(core.WithLogger(slog.New(slog.DiscardHandler)),
		core.WithRules(core.Rule{Name: "inflight", Resource: "*", Kind: core.KindSystem, Signal: core.SignalInFlight, Threshold: 4}))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer g.Close()
	ctx := context.Background()
	critical := core.WithPriority(ctx, core.PriorityCritical)
	for range 3 {
		if _, err := g.Enter(critical, "GET /pay"); err != nil {
			fmt.Println(err)
		}
	}
	_, err = g.Enter(ctx, "GET /pay") // default
	fmt.Println("default:", err != nil)
	_, err = g.Enter(critical, "GET /pay")
	fmt.Println("critical:", err != nil)
	// Output:
	// default: true
	// critical: false
}
