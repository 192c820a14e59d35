package sluicehttp_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"strconv"
	"time"

	sluicehttp "github.com/sluicekit/sluice/adapters/nethttp"
	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/extractors"
)

// userKey is the context key an authentication middleware stores the
// caller's user under.
type userKey struct{}

// authenticateUser is an application's authentication middleware.
func authenticateUser(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if user := r.Header.Get("Authorization"); user != "" { // a real one checks a token
			r = r.WithContext(context.WithValue(r.Context(), userKey{}, user))
		}
		next.ServeHTTP(w, r)
	})
}

// Limiting by the user an authentication middleware established: the
// param "user" reads the request's context under userKey{} (a rules file
// names it "param: user").
func Example_identity() {
	x, err := extractors.New(extractors.WithContextParam("user", userKey{}))
	if err != nil {
		log.Fatal(err)
	}
	guard, err := core.New(core.WithRules(
		core.Rule{Name: "per-user", Resource: "GET /hello", Kind: core.KindHotspot, Param: "user", Limit: 1, Window: time.Minute},
	))
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /hello", func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "hello") })
	srv := httptest.NewServer(authenticateUser(sluicehttp.Middleware(guard, sluicehttp.WithExtractor(x))(mux)))
	defer srv.Close()

	for _, user := range []string{"alice", "alice", "bob"} {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+"/hello", nil)
		req.Header.Set("Authorization", user)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			log.Fatal(err)
		}
		res.Body.Close()
		fmt.Println(user, res.StatusCode)
	}
	// Output:
	// alice 200
	// alice 429
	// bob 200
}

// A batch endpoint whose requests take one permit per item: the rule
// passes 10 items a second, however they are batched.
func ExampleWithCost() {
	guard, err := core.New(core.WithRules(
		core.Rule{Name: "items-rate", Resource: "POST /items", Kind: core.KindFlow, Limit: 10},
	))
	if err != nil {
		log.Fatal(err)
	}
	batchSize := func(r *http.Request) int64 {
		n, _ := strconv.ParseInt(r.URL.Query().Get("n"), 10, 64)
		return n // below 1 counts 1
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /items", func(w http.ResponseWriter, r *http.Request) {})
	srv := httptest.NewServer(sluicehttp.Middleware(guard, sluicehttp.WithCost(batchSize))(mux))
	defer srv.Close()

	for _, n := range []string{"6", "6", "4"} {
		res, err := http.Post(srv.URL+"/items?n="+n, "application/json", nil)
		if err != nil {
			log.Fatal(err)
		}
		res.Body.Close()
		fmt.Println(n, res.StatusCode)
	}
	// Output:
	// 6 200
	// 6 429
	// 4 200
}

// New returns an invalid option's error, where Middleware panics.
func ExampleNew() {
	guard, err := core.New()
	if err != nil {
		log.Fatal(err)
	}
	_, err = sluicehttp.New(guard, sluicehttp.WithSkipper(nil))
	fmt.Println(err)
	// Output:
	// sluicehttp: New: WithSkipper: nil function
}
