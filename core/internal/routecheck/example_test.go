package routecheck_test

import (
	"log/slog"
	"os"
	"strings"

	"github.com/sluicekit/sluice/core/internal/routecheck"
)

func ExampleChecker() {
	log := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		}}))
	c := routecheck.New(log, 20)
	exact := func(route string) func(string) bool { return func(name string) bool { return name == route } }
	c.SetRules([]routecheck.Rule{
		{Index: 0, Name: "items", Resource: "GET /items", Match: exact("GET /items")},
		{Index: 1, Name: "typo", Resource: "GET /itmes", Match: exact("GET /itmes")},
		{Index: 2, Name: "prefix", Resource: "POST /orders", Match: func(name string) bool { return strings.HasPrefix(name, "POST /orders") }},
	})
	c.Add("/items", "POST /orders/{id}") // a template alone serves every method
	c.Check()
	c.Check() // each rule once per rule set
	// Output:
	// level=WARN msg="sluice: rules match no route of the service; check their resources against the routes" rules="[rules[1] (typo): \"GET /itmes\"]" routes=2
}
