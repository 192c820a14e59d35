package sluicehttp_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"time"

	sluicehttp "github.com/sluicekit/sluice/adapters/nethttp"
	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/extractors"
)

// A ServeMux behind the middleware: the third request of the minute to
// GET /hello is blocked with 429, the RateLimit fields and a problem body.
func Example() {
	guard, err := core.New(core.WithRules(
		core.Rule{Name: "hello-rate", Resource: "GET /hello", Kind: core.KindFlow, Limit: 2, Window: time.Minute},
	))
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /hello", func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "hello\n")
	})
	// http.ListenAndServe(addr, sluicehttp.Middleware(guard)(mux)), here on
	// a test server:
	srv := httptest.NewServer(sluicehttp.Middleware(guard)(mux))
	defer srv.Close()

	for range 3 {
		res, err := http.Get(srv.URL + "/hello")
		if err != nil {
			log.Fatal(err)
		}
		if res.StatusCode == http.StatusOK {
			fmt.Println(res.Status)
		} else {
			var problem struct {
				Rule  string `json:"rule"`
				Limit int    `json:"limit"`
			}
			json.NewDecoder(res.Body).Decode(&problem)
			fmt.Println(res.Status, res.Header.Get("Content-Type"))
			fmt.Println("RateLimit-Policy:", res.Header.Get("RateLimit-Policy"))
			fmt.Println("rule:", problem.Rule, "limit:", problem.Limit)
		}
		res.Body.Close()
	}
	// Output:
	// 200 OK
	// 200 OK
	// 429 Too Many Requests application/problem+json
	// RateLimit-Policy: "hello-rate";q=2;w=60
	// rule: hello-rate limit: 2
}

// Wrap protects one route of a ServeMux; the resource is the route's
// pattern. Here a hotspot rule limits each item separately.
func ExampleWrap() {
	guard, err := core.New(core.WithRules(
		core.Rule{Name: "per-item", Resource: "GET /items/{id}", Kind: core.KindHotspot, Param: "path:id", Limit: 1, Window: time.Minute},
	))
	if err != nil {
		log.Fatal(err)
	}
	items := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "item %s\n", r.PathValue("id"))
	})
	mux := http.NewServeMux()
	mux.Handle("GET /items/{id}", sluicehttp.Wrap(guard, items))
	srv := httptest.NewServer(mux)
	defer srv.Close()

	for _, path := range []string{"/items/1", "/items/1", "/items/2"} {
		res, err := http.Get(srv.URL + path)
		if err != nil {
			log.Fatal(err)
		}
		res.Body.Close()
		fmt.Println(path, res.StatusCode)
	}
	st, _ := guard.Stats("GET /items/{id}")
	fmt.Println("GET /items/{id} passed", st.Pass, "blocked", st.Block)
	// Output:
	// /items/1 200
	// /items/1 429
	// /items/2 200
	// GET /items/{id} passed 2 blocked 1
}

// Behind a reverse proxy, the client IP is the proxy's unless the
// Extractor trusts it: then X-Forwarded-For is read, from the right.
func ExampleWithExtractor() {
	x, err := extractors.New(extractors.WithTrustedProxies("127.0.0.1"))
	if err != nil {
		log.Fatal(err)
	}
	guard, err := core.New(core.WithRules(
		core.Rule{Name: "per-ip", Resource: "*", Kind: core.KindHotspot, Param: "ip", Limit: 1, Window: time.Minute},
	))
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /", func(w http.ResponseWriter, r *http.Request) {})
	srv := httptest.NewServer(sluicehttp.Middleware(guard, sluicehttp.WithExtractor(x))(mux))
	defer srv.Close()

	for _, client := range []string{"203.0.113.7", "203.0.113.8", "203.0.113.7"} {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+"/", nil)
		req.Header.Set("X-Forwarded-For", client) // as the proxy at 127.0.0.1 sets it
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			log.Fatal(err)
		}
		res.Body.Close()
		fmt.Println(client, res.StatusCode)
	}
	// Output:
	// 203.0.113.7 200
	// 203.0.113.8 200
	// 203.0.113.7 429
}

// A block handler can replace the response, or add to the default one.
func ExampleWithBlockHandler() {
	guard, err := core.New(core.WithRules(
		core.Rule{Name: "closed", Resource: "*", Kind: core.KindFlow, Limit: 0},
	))
	if err != nil {
		log.Fatal(err)
	}
	block := func(w http.ResponseWriter, r *http.Request, b *core.BlockedError) {
		w.Header().Set("X-Blocked-By", b.Rule)
		sluicehttp.DefaultBlockHandler(w, r, b)
	}
	srv := httptest.NewServer(sluicehttp.Middleware(guard, sluicehttp.WithBlockHandler(block))(http.NewServeMux()))
	defer srv.Close()

	res, err := http.Get(srv.URL + "/anything")
	if err != nil {
		log.Fatal(err)
	}
	res.Body.Close()
	fmt.Println(res.StatusCode, res.Header.Get("X-Blocked-By"), res.Header.Get("Content-Type"))
	// Output:
	// 403 closed application/problem+json
}

// A client whose calls to another service go through a Guard: the third
// call of the minute never leaves the process.
func ExampleNewTransport() {
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "ok\n")
	}))
	defer upstream.Close()

	guard, err := core.New(core.WithRules(
		core.Rule{Name: "upstream-rate", Resource: "GET 127.0.0.1", Kind: core.KindFlow, Limit: 2, Window: time.Minute},
	))
	if err != nil {
		log.Fatal(err)
	}
	t, err := sluicehttp.NewTransport(guard, nil)
	if err != nil {
		log.Fatal(err)
	}
	client := &http.Client{Transport: t}
	for range 3 {
		res, err := client.Get(upstream.URL)
		var b *core.BlockedError
		switch {
		case errors.As(err, &b):
			fmt.Println("blocked by", b.Rule, "for at most", b.Window)
		case err != nil:
			log.Fatal(err)
		default:
			fmt.Println(res.Status)
			res.Body.Close() // ends the call for the Guard
		}
	}
	// Output:
	// 200 OK
	// 200 OK
	// blocked by upstream-rate for at most 1m0s
}
