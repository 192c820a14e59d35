package sluiceprom_test

import (
	"log"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/sluicekit/sluice/core"
	sluiceprom "github.com/sluicekit/sluice/core/prometheus"
)

func ExampleHandler() {
	guard, err := core.New(core.WithRules(core.Rule{Resource: "GET /items/{id}", Kind: core.KindFlow, Limit: 100}))
	if err != nil {
		log.Fatal(err)
	}
	metrics, err := sluiceprom.Handler(guard)
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", metrics)
	// ... mux.Handle your routes, wrapped with an adapter over guard.
}

func ExampleNewCollector() {
	guard, err := core.New()
	if err != nil {
		log.Fatal(err)
	}
	c, err := sluiceprom.NewCollector(guard, sluiceprom.WithConstLabels(prometheus.Labels{"instance_name": "checkout-1"}))
	if err != nil {
		log.Fatal(err)
	}
	prometheus.MustRegister(c) // in the default registry, beside the process metrics
}
