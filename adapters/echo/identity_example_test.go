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
	e := echo.New()
	e.Use(func(next echo.HandlerFunc) echo.HandlerFunc { // the application's authentication
		return func(c echo.Context) error {
			if user := c.Request().Header.Get("Authorization"); user != "" {
				c.Set("user_id", user)
			}
			return next(c)
		}
	})
	e.Use(sluiceecho.Middleware(guard, sluiceecho.WithExtractor(x)))
	e.GET("/hello", func(c echo.Context) error { return c.String(http.StatusOK, "hello") })
	srv := httptest.NewServer(e)
	defer srv.Close()

	for _, user := range []string{"alice", "alice", "bob"} {
		fmt.Println(user, get(srv.URL+"/hello", "Authorization", user))
	}
	// Output:
	// alice 200
	// alice 429
	// bob 200
}

// The ip param as the Echo's IPExtractor finds the client, so that
// proxies are configured once.
func ExampleWithFrameworkClientIP() {
	guard, err := core.New(core.WithRules(
		core.Rule{Name: "per-ip", Resource: "GET /hello", Kind: core.KindHotspot, Param: "ip", Limit: 1, Window: time.Minute},
	))
	if err != nil {
		log.Fatal(err)
	}
	e := echo.New()
	e.IPExtractor = echo.ExtractIPFromXFFHeader() // trusts loopback and private proxies
	e.Use(sluiceecho.Middleware(guard, sluiceecho.WithFrameworkClientIP()))
	e.GET("/hello", func(c echo.Context) error { return c.String(http.StatusOK, "hello") })
	srv := httptest.NewServer(e)
	defer srv.Close()

	for _, client := range []string{"203.0.113.1", "203.0.113.1", "203.0.113.2"} {
		fmt.Println(client, get(srv.URL+"/hello", "X-Forwarded-For", client))
	}
	// Output:
	// 203.0.113.1 200
	// 203.0.113.1 429
	// 203.0.113.2 200
}
