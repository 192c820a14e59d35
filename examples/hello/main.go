// Command hello is the README's net/http program: a server whose routes
// are limited by the rules in rules.yaml, next to it.
//
//	cd examples/hello && go run .
//	curl -i localhost:8080/hello                          # 5 per second, then 429
//	curl -i -H 'X-User-ID: alice' localhost:8080/items/1  # 3 per second per user
package main

import (
	"cmp"
	"log"
	"net/http"
	"os"

	sluicehttp "github.com/sluicekit/sluice/adapters/nethttp"
	"github.com/sluicekit/sluice/core/rulesfile"
)

func main() {
	guard, err := rulesfile.NewGuard("rules.yaml")
	if err != nil {
		log.Fatal(err) // names every bad rule, field, value and line
	}
	defer guard.Close()

	mux := http.NewServeMux()
	mux.HandleFunc("GET /hello", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("hello\n"))
	})
	mux.HandleFunc("GET /items/{id}", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("item " + r.PathValue("id") + "\n"))
	})
	addr := cmp.Or(os.Getenv("ADDR"), "127.0.0.1:8080")
	log.Fatal(http.ListenAndServe(addr, sluicehttp.Middleware(guard)(mux)))
}
