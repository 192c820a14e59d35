// Command echo serves a few routes from an Echo behind the sluice
// middleware, with rules that make the limits easy to see:
//
//	go -C examples run ./echo                       # default rules, 127.0.0.1:8080
//	go -C examples run ./echo -addr :9090 -rules my-rules.yaml
//
// With -rules, the example applies the file's changes while it serves:
// it looks at the file every -reload (default 1s; 0: never), applies a new
// version once two looks saw it, keeps the counts of the rules that stay,
// and logs each reload, or the problem of a bad version, whose rules are
// not applied.
//
//	curl -i localhost:8080/hello                    # 5 per second, then 429
//	curl -i -H 'X-User-ID: alice' localhost:8080/items/42   # 3 per second per user
//	curl -i 'localhost:8080/slow?ms=2000'           # 2 in flight, then 503
//	curl -i localhost:8080/fail                     # 500, counted as an error
//
// The net/http and gin examples serve the same routes with the same rules:
// the echo route /items/:id is the resource "GET /items/{id}" the rules
// name.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"syscall"

	"github.com/labstack/echo/v4"

	sluiceecho "github.com/sluicekit/sluice/adapters/echo"
	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/examples/internal/exampleapp"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stderr, nil); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "echo example:", err)
		}
		os.Exit(2)
	}
}

// run serves the example as args say (see exampleapp.Run) until ctx ends,
// logging to out.
func run(ctx context.Context, args []string, out io.Writer, ready func(addr string)) error {
	return exampleapp.Run(ctx, "echo", args, out, ready, func(guard *core.Guard) http.Handler {
		e := echo.New()
		e.HideBanner, e.HidePort = true, true
		e.Use(sluiceecho.Middleware(guard))
		e.GET("/hello", func(c echo.Context) error { exampleapp.Hello(c.Response()); return nil })
		e.GET("/items/:id", func(c echo.Context) error { exampleapp.Item(c.Response(), c.Param("id")); return nil })
		e.GET("/slow", func(c echo.Context) error { exampleapp.Slow(c.Response(), c.Request()); return nil })
		e.GET("/fail", func(c echo.Context) error { exampleapp.Fail(c.Response()); return nil })
		return e
	})
}
