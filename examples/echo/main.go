// Command echo serves a few routes from an Echo behind the sluice
// middleware, with rules that make the limits easy to see:
//
//	go run ./examples/echo                          # default rules, 127.0.0.1:8080
//	go run ./examples/echo -addr :9090 -rules my-rules.yaml
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
	"flag"
	"log"
	"os"
	"os/signal"
	"syscall"

	"github.com/labstack/echo/v4"

	sluiceecho "github.com/sluicekit/sluice/adapters/echo"
	"github.com/sluicekit/sluice/examples/internal/exampleapp"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "address to listen on")
	rules := flag.String("rules", "", "rules file (YAML, or JSON with a .json name); default: the embedded rules")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, *addr, *rules, func(addr string) { log.Printf("echo example listening on http://%s", addr) })
	if err != nil {
		log.Fatal(err)
	}
}

// run serves the example on addr until ctx ends.
func run(ctx context.Context, addr, rulesFile string, ready func(addr string)) error {
	guard, err := exampleapp.Guard(rulesFile)
	if err != nil {
		return err
	}
	defer guard.Close()
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.Use(sluiceecho.New(guard))
	e.GET("/hello", func(c echo.Context) error { exampleapp.Hello(c.Response()); return nil })
	e.GET("/items/:id", func(c echo.Context) error { exampleapp.Item(c.Response(), c.Param("id")); return nil })
	e.GET("/slow", func(c echo.Context) error { exampleapp.Slow(c.Response(), c.Request()); return nil })
	e.GET("/fail", func(c echo.Context) error { exampleapp.Fail(c.Response()); return nil })
	return exampleapp.Serve(ctx, addr, e, ready)
}
