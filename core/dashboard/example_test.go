package dashboard_test

import (
	"log"
	"net/http"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/dashboard"
)

func ExampleNew() {
	guard, err := core.New(core.WithRules(core.Rule{Resource: "GET /hello", Kind: core.KindFlow, Limit: 100}))
	if err != nil {
		log.Fatal(err)
	}
	dash, err := dashboard.New(guard, dashboard.WithTitle("checkout"))
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/debug/sluice/", http.StripPrefix("/debug/sluice", dash))
	// ... mux.Handle your routes, wrapped with an adapter over guard, then
	// http.ListenAndServe(addr, mux).
}
