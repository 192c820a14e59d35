package sluiceecho_test

import (
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/labstack/echo/v4"

	sluiceecho "github.com/sluicekit/sluice/adapters/echo"
	"github.com/sluicekit/sluice/core"
)

// An Echo with the middleware: the route /items/:id is the resource
// "GET /items/{id}", and a hotspot rule limits each item to one request a
// minute.
func Example() {
	guard, err := core.New(core.WithRules(
		core.Rule{Name: "per-item", Resource: "GET /items/{id}", Kind: core.KindHotspot,
			Param: "path:id", Limit: 1, Window: time.Minute},
	))
	if err != nil {
		log.Fatal(err)
	}
	e := echo.New()
	e.Use(sluiceecho.Middleware(guard))
	e.GET("/items/:id", func(c echo.Context) error { return c.JSON(http.StatusOK, map[string]string{"id": c.Param("id")}) })
	srv := httptest.NewServer(e)
	defer srv.Close()

	for _, path := range []string{"/items/1", "/items/2", "/items/1"} {
		res, err := http.Get(srv.URL + path)
		if err != nil {
			log.Fatal(err)
		}
		res.Body.Close()
		fmt.Println(path, res.StatusCode)
		if res.StatusCode != http.StatusOK {
			fmt.Println("  RateLimit:", res.Header.Get("RateLimit"))
		}
	}
	// Output:
	// /items/1 200
	// /items/2 200
	// /items/1 429
	//   RateLimit: "per-item";r=0;t=60
}

// The RateLimit fields turned off on admitted responses: blocked ones keep
// them.
func ExampleWithRateLimitFields() {
	guard, err := core.New(core.WithRules(
		core.Rule{Name: "hello-rate", Resource: "GET /hello", Kind: core.KindFlow, Limit: 1, Window: time.Minute},
	))
	if err != nil {
		log.Fatal(err)
	}
	e := echo.New()
	e.Use(sluiceecho.Middleware(guard, sluiceecho.WithRateLimitFields(false)))
	e.GET("/hello", func(c echo.Context) error { return c.String(http.StatusOK, "hello") })
	srv := httptest.NewServer(e)
	defer srv.Close()

	for range 2 {
		res, err := http.Get(srv.URL + "/hello")
		if err != nil {
			log.Fatal(err)
		}
		res.Body.Close()
		fmt.Printf("%d %q\n", res.StatusCode, res.Header.Get("RateLimit-Policy"))
	}
	// Output:
	// 200 ""
	// 429 "\"hello-rate\";q=1;w=60"
}
