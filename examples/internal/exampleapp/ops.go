package exampleapp

import (
	"net/http"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/dashboard"
	sluiceprom "github.com/sluicekit/sluice/core/prometheus"
)

// Ops returns a handler that serves guard's dashboard under /debug/sluice/,
// its Prometheus metrics at /metrics, and everything else with app. The
// operators' pages are outside app, so no rule limits them and they are no
// resources of the Guard.
func Ops(guard *core.Guard, app http.Handler) (http.Handler, error) {
	dash, err := dashboard.New(guard)
	if err != nil {
		return nil, err
	}
	metrics, err := sluiceprom.Handler(guard)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/debug/sluice/", http.StripPrefix("/debug/sluice", dash))
	mux.Handle("GET /metrics", metrics)
	mux.Handle("/", app)
	return mux, nil
}
