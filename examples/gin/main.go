// Command gin serves a few routes from a gin engine behind the sluice
// middleware, with rules that make the limits easy to see:
//
//	go run ./examples/gin                           # default rules, 127.0.0.1:8080
//	go run ./examples/gin -addr :9090 -rules my-rules.yaml
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
	"flag"
	"log"
	"os"
	"os/signal"
	"syscall"

	"github.com/gin-gonic/gin"

	sluicegin "github.com/sluicekit/sluice/adapters/gin"
	"github.com/sluicekit/sluice/examples/internal/exampleapp"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "address to listen on")
	rules := flag.String("rules", "", "rules file (YAML, or JSON with a .json name); default: the embedded rules")
	flag.Parse()
	gin.SetMode(gin.ReleaseMode)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, *addr, *rules, func(addr string) { log.Printf("gin example listening on http://%s", addr) })
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
	r := gin.New()
	r.Use(gin.Recovery(), sluicegin.New(guard))
	r.GET("/hello", func(c *gin.Context) { exampleapp.Hello(c.Writer) })
	r.GET("/items/:id", func(c *gin.Context) { exampleapp.Item(c.Writer, c.Param("id")) })
	r.GET("/slow", func(c *gin.Context) { exampleapp.Slow(c.Writer, c.Request) })
	r.GET("/fail", func(c *gin.Context) { exampleapp.Fail(c.Writer) })
	return exampleapp.Serve(ctx, addr, r, ready)
}
