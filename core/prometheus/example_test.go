package sluiceprom_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluicekit/sluice/core"
	sluiceprom "github.com/sluicekit/sluice/core/prometheus"
)

// A service without a Prometheus registry of its own mounts Handler at
// /metrics.
func ExampleHandler() {
	guard, err := core.New(core.WithRules(
		core.Rule{Name: "items", Resource: "GET /items/{id}", Kind: core.KindFlow, Limit: 2, Window: time.Minute},
	))
	if err != nil {
		log.Fatal(err)
	}
	defer guard.Close()
	h, err := sluiceprom.Handler(guard)
	if err != nil {
		log.Fatal(err)
	}
	http.Handle("/metrics", h)
	// ... your routes, wrapped with an adapter over guard, then
	// http.ListenAndServe(addr, nil).

	// Three requests: the rule lets two through a minute.
	for range 3 {
		if e, err := guard.Enter(context.Background(), "GET /items/{id}"); err == nil {
			e.Exit(nil)
		}
	}
	// What Prometheus gets from GET /metrics, in part.
	rec := httptest.NewRecorder()
	http.DefaultServeMux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	for line := range strings.Lines(rec.Body.String()) {
		if strings.HasPrefix(line, `sluice_requests_total{sluice_resource="GET /items/{id}",sluice_result="passed"`) ||
			strings.HasPrefix(line, `sluice_requests_total{sluice_resource="GET /items/{id}",sluice_result="flow"`) ||
			strings.HasPrefix(line, "sluice_rule_blocked_total{") {
			fmt.Print(line)
		}
	}
	// Output:
	// sluice_requests_total{sluice_resource="GET /items/{id}",sluice_result="flow"} 1
	// sluice_requests_total{sluice_resource="GET /items/{id}",sluice_result="passed"} 2
	// sluice_rule_blocked_total{sluice_rule_kind="flow",sluice_rule_name="items",sluice_rule_resource="GET /items/{id}"} 1
}

// A service with a registry registers a Collector in it, here with a label
// naming the instance on every series.
func ExampleNewCollector() {
	guard, err := core.New()
	if err != nil {
		log.Fatal(err)
	}
	defer guard.Close()
	c, err := sluiceprom.NewCollector(guard, sluiceprom.WithConstLabels(prometheus.Labels{"instance_name": "checkout-1"}))
	if err != nil {
		log.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	if err := reg.Register(c); err != nil {
		log.Fatal(err)
	}
	fams, err := reg.Gather()
	if err != nil {
		log.Fatal(err)
	}
	// A new Guard has seen no resource, no rule and no store yet.
	for _, f := range fams {
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				fmt.Printf("%s{%s=%q} %g\n", f.GetName(), l.GetName(), l.GetValue(), m.GetCounter().GetValue())
			}
		}
	}
	// Output:
	// sluice_events_dropped_total{instance_name="checkout-1"} 0
}
