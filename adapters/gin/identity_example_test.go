package sluicegin_test

import (
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	sluicegin "github.com/sluicekit/sluice/adapters/gin"
	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/extractors"
)

// get sends GET url with the header key: value, and returns the status.
func get(url, key, value string) int {
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set(key, value)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		log.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}

// Limiting by the user an authentication middleware stored with c.Set:
// the param "user" reads c.Get("user_id") (a rules file names it
// "param: user").
func Example_identity() {
	x, err := extractors.New(extractors.WithContextParam("user", "user_id"))
	if err != nil {
		log.Fatal(err)
	}
	guard, err := core.New(core.WithRules(
		core.Rule{Name: "per-user", Resource: "GET /hello", Kind: core.KindHotspot, Param: "user", Limit: 1, Window: time.Minute},
	))
	if err != nil {
		log.Fatal(err)
	}
	r := gin.New()
	r.Use(func(c *gin.Context) { // the application's authentication
		if user := c.GetHeader("Authorization"); user != "" {
			c.Set("user_id", user)
		}
	})
	r.Use(sluicegin.Middleware(guard, sluicegin.WithExtractor(x)))
	r.GET("/hello", func(c *gin.Context) { c.String(http.StatusOK, "hello") })
	srv := httptest.NewServer(r)
	defer srv.Close()

	for _, user := range []string{"alice", "alice", "bob"} {
		fmt.Println(user, get(srv.URL+"/hello", "Authorization", user))
	}
	// Output:
	// alice 200
	// alice 429
	// bob 200
}

// The ip param as gin's trusted-proxy settings find the client, so that
// proxies are configured once.
func ExampleWithFrameworkClientIP() {
	guard, err := core.New(core.WithRules(
		core.Rule{Name: "per-ip", Resource: "GET /hello", Kind: core.KindHotspot, Param: "ip", Limit: 1, Window: time.Minute},
	))
	if err != nil {
		log.Fatal(err)
	}
	r := gin.New()
	if err := r.SetTrustedProxies([]string{"127.0.0.1"}); err != nil { // the load balancer
		log.Fatal(err)
	}
	r.Use(sluicegin.Middleware(guard, sluicegin.WithFrameworkClientIP()))
	r.GET("/hello", func(c *gin.Context) { c.String(http.StatusOK, "hello") })
	srv := httptest.NewServer(r)
	defer srv.Close()

	for _, client := range []string{"203.0.113.1", "203.0.113.1", "203.0.113.2"} {
		fmt.Println(client, get(srv.URL+"/hello", "X-Forwarded-For", client))
	}
	// Output:
	// 203.0.113.1 200
	// 203.0.113.1 429
	// 203.0.113.2 200
}

// A batch endpoint whose requests take one permit per item.
func ExampleWithCost() {
	guard, err := core.New(core.WithRules(
		core.Rule{Name: "items-rate", Resource: "GET /items", Kind: core.KindFlow, Limit: 10},
	))
	if err != nil {
		log.Fatal(err)
	}
	r := gin.New()
	r.Use(sluicegin.Middleware(guard, sluicegin.WithCost(func(c *gin.Context) int64 {
		n, _ := strconv.ParseInt(c.Query("n"), 10, 64)
		return n // below 1 counts 1
	})))
	r.GET("/items", func(c *gin.Context) { c.Status(http.StatusOK) })
	srv := httptest.NewServer(r)
	defer srv.Close()

	for _, n := range []string{"6", "6", "4"} {
		fmt.Println(n, get(srv.URL+"/items?n="+n, "Accept", "*/*"))
	}
	// Output:
	// 6 200
	// 6 429
	// 4 200
}
