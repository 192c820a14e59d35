package engine_test

import (
	"context"
	"fmt"
	"io"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/examples/overload/engine"
)

// A program with one protection more, a concurrency rule of twice the
// workers: -protect names it beside the built-in ones, which a
// program's main runs with engine.Program.Main.
func ExampleProgram() {
	p := engine.Program{Protections: []engine.Protection{{
		Name: "static-2x",
		Rules: func(s engine.Setup) []core.Rule {
			return []core.Rule{{Name: "static-2x", Resource: engine.Route, Kind: core.KindConcurrency, Limit: 2 * int64(s.Workers)}}
		},
	}}}
	err := p.Run(context.Background(), []string{"-protect=static,static-2x,static-3x"}, io.Discard)
	fmt.Println(err)
	// Output: -protect: unknown protection "static-3x" (known: none, static, adaptive, system, system-rt, static-2x)
}
