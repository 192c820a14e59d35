// Command gin is the README's gin program: the routes of the net/http
// program on a gin engine, limited by the same rules.yaml (go run ./gin).
package main

import (
	"cmp"
	"log"
	"net/http"
	"os"

	"github.com/gin-gonic/gin"

	sluicegin "github.com/sluicekit/sluice/adapters/gin"
	"github.com/sluicekit/sluice/core/rulesfile"
)

func main() {
	guard, err := rulesfile.NewGuard("rules.yaml")
	if err != nil {
		log.Fatal(err)
	}
	defer guard.Close()

	r := gin.New()
	r.Use(gin.Recovery(), sluicegin.Middleware(guard)) // Recovery first: a panic still exits the Guard
	r.GET("/hello", func(c *gin.Context) {
		c.String(http.StatusOK, "hello\n")
	})
	r.GET("/items/:id", func(c *gin.Context) { // the resource "GET /items/{id}"
		c.String(http.StatusOK, "item %s\n", c.Param("id"))
	})
	log.Fatal(r.Run(cmp.Or(os.Getenv("ADDR"), "127.0.0.1:8080")))
}
