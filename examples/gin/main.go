// Command gin serves a few routes from a gin engine behind the sluice
// middleware, with rules that make the limits easy to see:
//
//	go -C examples run ./gin                        # default rules, 127.0.0.1:8080
//	go -C examples run ./gin -addr :9090 -rules my-rules.yaml
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
// The net/http and echo examples serve the same routes with the same rules:
// the gin route /items/:id is the resource "GET /items/{id}" the rules name.
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

	"github.com/gin-gonic/gin"

	sluicegin "github.com/sluicekit/sluice/adapters/gin"
	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/examples/internal/exampleapp"
)

func main() {
	gin.SetMode(gin.ReleaseMode)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stderr, nil); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "gin example:", err)
		}
		os.Exit(2)
	}
}

// run serves the example as args say (see exampleapp.Run) until ctx ends,
// logging to out.
func run(ctx context.Context, args []string, out io.Writer, ready func(addr string)) error {
	return exampleapp.Run(ctx, "gin", args, out, ready, func(guard *core.Guard) http.Handler {
		r := gin.New()
		r.Use(gin.Recovery(), sluicegin.Middleware(guard))
		r.GET("/hello", func(c *gin.Context) { exampleapp.Hello(c.Writer) })
		r.GET("/items/:id", func(c *gin.Context) { exampleapp.Item(c.Writer, c.Param("id")) })
		r.GET("/slow", func(c *gin.Context) { exampleapp.Slow(c.Writer, c.Request) })
		r.GET("/fail", func(c *gin.Context) { exampleapp.Fail(c.Writer) })
		return r
	})
}
