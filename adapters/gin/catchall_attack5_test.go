package sluicegin_test

import (
	"net/http"
	"testing"

	"github.com/gin-gonic/gin"
	"github.com/stretchr/testify/assert"

	sluicegin "github.com/sluicekit/sluice/adapters/gin"
	"github.com/sluicekit/sluice/core"
)

// TestCatchAllValueAsNetHTTP: a catch-all's path param is the rest of the
// path without its leading '/', as net/http's {path...} and echo's "*"
// give it, so that one rules file's overrides hold through every adapter.
// Before, gin's c.Param value ("/private/report.pdf") was the value, and an
// override written for the other adapters ("private/report.pdf": 0,
// blocking the file) let every request through on gin.
func TestCatchAllValueAsNetHTTP(t *testing.T) {
	g := newGuard(t, core.Rule{Name: "per-file", Resource: "GET /files/{path...}", Kind: core.KindHotspot,
		Param: "path:path", Limit: 1, Overrides: map[string]int64{"private/report.pdf": 0}})
	r := gin.New()
	r.Use(sluicegin.Middleware(g))
	r.GET("/files/*path", func(c *gin.Context) { c.String(http.StatusOK, c.Param("path")) })
	r.GET("/items/:id", func(c *gin.Context) { c.String(http.StatusOK, c.Param("id")) })
	srv := serve(t, r)
	assert.Equal(t, http.StatusForbidden, do(t, srv, "GET", "/files/private/report.pdf"))
	assert.Equal(t, http.StatusOK, do(t, srv, "GET", "/files/public/a.txt"))
	assert.Equal(t, http.StatusTooManyRequests, do(t, srv, "GET", "/files/public/a.txt"))
}
