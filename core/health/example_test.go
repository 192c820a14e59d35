package health_test

import (
	"fmt"
	"io"
	"net/http/httptest"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/health"
)

// A readiness endpoint for Kubernetes: 200 and the report while ready.
func ExampleHandler() {
	guard, err := core.New()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer guard.Close()
	h, err := health.Handler(guard, health.RequireStores())
	if err != nil {
		fmt.Println(err)
		return
	}
	// mux.Handle("GET /readyz", h), here on a test server:
	srv := httptest.NewServer(h)
	defer srv.Close()
	res, err := srv.Client().Get(srv.URL)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	fmt.Print(res.Status, " ", string(body))
	// Output:
	// 200 OK {"ready":true,"stores":[],"rules":{"count":0}}
}
