package sluicegin_test

import (
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/gin-gonic/gin"

	sluicegin "github.com/sluicekit/sluice/adapters/gin"
	"github.com/sluicekit/sluice/core"
)

// A gin engine with the middleware: the route /items/:id is the resource
// "GET /items/{id}", and a hotspot rule limits each X-User-ID to two
// requests a minute.
func Example() {
	guard, err := core.New(core.WithRules(
		core.Rule{Name: "per-user", Resource: "GET /items/{id}", Kind: core.KindHotspot,
			Param: "header:X-User-ID", Limit: 2, Window: time.Minute},
	))
	if err != nil {
		log.Fatal(err)
	}
	r := gin.New()
	r.Use(gin.Recovery(), sluicegin.Middleware(guard))
	r.GET("/items/:id", func(c *gin.Context) { c.JSON(http.StatusOK, gin.H{"id": c.Param("id")}) })
	srv := httptest.NewServer(r)
	defer srv.Close()

	for _, user := range []string{"alice", "alice", "bob", "alice"} {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+"/items/7", nil)
		req.Header.Set("X-User-ID", user)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			log.Fatal(err)
		}
		res.Body.Close()
		// Admitted and blocked responses carry the RateLimit fields.
		fmt.Println(user, res.StatusCode, res.Header.Get("RateLimit-Policy"))
	}
	// Output:
	// alice 200 "per-user";q=2;w=60
	// alice 200 "per-user";q=2;w=60
	// bob 200 "per-user";q=2;w=60
	// alice 429 "per-user";q=2;w=60
}

// Skipping requests: health checks are neither limited nor counted. A
// gin.Skipper works as is.
func ExampleWithSkipper() {
	guard, err := core.New(core.WithRules(core.Rule{Name: "closed", Resource: "*", Kind: core.KindFlow, Limit: 0}))
	if err != nil {
		log.Fatal(err)
	}
	var health gin.Skipper = func(c *gin.Context) bool { return c.FullPath() == "/healthz" }
	r := gin.New()
	r.Use(sluicegin.Middleware(guard, sluicegin.WithSkipper(health)))
	r.GET("/healthz", func(c *gin.Context) { c.String(http.StatusOK, "ok") })
	r.GET("/work", func(c *gin.Context) { c.String(http.StatusOK, "done") })
	srv := httptest.NewServer(r)
	defer srv.Close()

	for _, path := range []string{"/healthz", "/work"} {
		res, err := http.Get(srv.URL + path)
		if err != nil {
			log.Fatal(err)
		}
		res.Body.Close()
		fmt.Println(path, res.StatusCode)
	}
	// Output:
	// /healthz 200
	// /work 403
}
