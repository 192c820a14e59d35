package dashboard_test

import (
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/dashboard"
)

func ExampleNew() {
	guard, err := core.New(core.WithRules(
		core.Rule{Name: "hello-rate", Resource: "GET /hello", Kind: core.KindFlow, Limit: 100},
	))
	if err != nil {
		log.Fatal(err)
	}
	defer guard.Close()

	dash, err := dashboard.New(guard, dashboard.WithTitle("checkout"), dashboard.WithHistory(120))
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/debug/sluice/", http.StripPrefix("/debug/sluice", dash))
	// ... your routes, wrapped with an adapter over guard; then
	// http.ListenAndServe(addr, mux), and open /debug/sluice/ in a browser.

	srv := httptest.NewServer(mux)
	defer srv.Close()
	res, err := http.Get(srv.URL + "/debug/sluice/api/snapshot")
	if err != nil {
		log.Fatal(err)
	}
	defer res.Body.Close()
	var snap struct { // the fields of the JSON this example reads (see package doc)
		Rules []struct{ Name, Resource, Summary string }
	}
	if err := json.NewDecoder(res.Body).Decode(&snap); err != nil {
		log.Fatal(err)
	}
	for _, r := range snap.Rules {
		fmt.Printf("%s on %s: %s\n", r.Name, r.Resource, r.Summary)
	}
	// Output:
	// hello-rate on GET /hello: 100 per 1s, leap-array
}
