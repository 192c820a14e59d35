// Command echo is the README's echo program: the routes of the net/http
// program on an echo server, limited by the same rules.yaml (go run ./echo).
package main

import (
	"cmp"
	"log"
	"net/http"
	"os"

	"github.com/labstack/echo/v4"

	sluiceecho "github.com/sluicekit/sluice/adapters/echo"
	"github.com/sluicekit/sluice/core/rulesfile"
)

func main() {
	guard, err := rulesfile.NewGuard("rules.yaml")
	if err != nil {
		log.Fatal(err)
	}
	defer guard.Close()

	e := echo.New()
	e.Use(sluiceecho.Middleware(guard))
	e.GET("/hello", func(c echo.Context) error {
		return c.String(http.StatusOK, "hello\n")
	})
	e.GET("/items/:id", func(c echo.Context) error { // the resource "GET /items/{id}"
		return c.String(http.StatusOK, "item "+c.Param("id")+"\n")
	})
	log.Fatal(e.Start(cmp.Or(os.Getenv("ADDR"), "127.0.0.1:8080")))
}
