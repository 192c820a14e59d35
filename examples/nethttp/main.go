// Command nethttp serves a few routes from a net/http ServeMux behind the
// sluice middleware, with rules that make the limits easy to see:
//
//	go run ./examples/nethttp                       # default rules, 127.0.0.1:8080
//	go run ./examples/nethttp -addr :9090 -rules my-rules.yaml
//
//	curl -i localhost:8080/hello                    # 5 per second, then 429
//	curl -i -H 'X-User-ID: alice' localhost:8080/items/42   # 3 per second per user
//	curl -i 'localhost:8080/slow?ms=2000'           # 2 in flight, then 503
//	curl -i localhost:8080/fail                     # 500, counted as an error
//
// The gin and echo examples serve the same routes with the same rules.
package main

import (
	"context"
	"flag"
	"log"
	"net/http"
	"os"
	"os/signal"
	"syscall"

	sluicehttp "github.com/sluicekit/sluice/adapters/nethttp"
	"github.com/sluicekit/sluice/examples/internal/exampleapp"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "address to listen on")
	rules := flag.String("rules", "", "rules file (YAML, or JSON with a .json name); default: the embedded rules")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, *addr, *rules, func(addr string) { log.Printf("nethttp example listening on http://%s", addr) })
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
	mux := http.NewServeMux()
	mux.HandleFunc("GET /hello", func(w http.ResponseWriter, r *http.Request) { exampleapp.Hello(w) })
	mux.HandleFunc("GET /items/{id}", func(w http.ResponseWriter, r *http.Request) { exampleapp.Item(w, r.PathValue("id")) })
	mux.HandleFunc("GET /slow", exampleapp.Slow)
	mux.HandleFunc("GET /fail", func(w http.ResponseWriter, r *http.Request) { exampleapp.Fail(w) })
	return exampleapp.Serve(ctx, addr, sluicehttp.Middleware(guard)(mux), ready)
}
