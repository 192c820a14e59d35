// Command nethttp serves a few routes from a net/http ServeMux behind the
// sluice middleware, with rules that make the limits easy to see:
//
//	go -C examples run ./nethttp                    # default rules, 127.0.0.1:8080
//	go -C examples run ./nethttp -addr :9090 -rules my-rules.yaml
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
// The gin and echo examples serve the same routes with the same rules.
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

	sluicehttp "github.com/sluicekit/sluice/adapters/nethttp"
	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/examples/internal/exampleapp"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stderr, nil); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "nethttp example:", err)
		}
		os.Exit(2)
	}
}

// run serves the example as args say (see exampleapp.Run) until ctx ends,
// logging to out.
func run(ctx context.Context, args []string, out io.Writer, ready func(addr string)) error {
	return exampleapp.Run(ctx, "nethttp", args, out, ready, func(guard *core.Guard) http.Handler {
		mux := http.NewServeMux()
		mux.HandleFunc("GET /hello", func(w http.ResponseWriter, r *http.Request) { exampleapp.Hello(w) })
		mux.HandleFunc("GET /items/{id}", func(w http.ResponseWriter, r *http.Request) { exampleapp.Item(w, r.PathValue("id")) })
		mux.HandleFunc("GET /slow", exampleapp.Slow)
		mux.HandleFunc("GET /fail", func(w http.ResponseWriter, r *http.Request) { exampleapp.Fail(w) })
		return sluicehttp.Middleware(guard)(mux)
	})
}
