package sluicegin_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	sluicegin "github.com/sluicekit/sluice/adapters/gin"
	"github.com/sluicekit/sluice/core"
)

// TestClientBindErrorsDoNotOpenTheBreaker: a hostile client posts
// malformed JSON to a route that binds its body with c.BindJSON, which
// answers 400 and attaches the bind error (c.AbortWithError). Under an
// error-count breaker on the route, those 400s must not count as the
// server failing, or one client's bad bodies open the breaker and every
// other client gets 503 (echo's default skips an *echo.HTTPError below 500,
// gRPC's counts server faults only). A handler that attaches an error to a
// response it answers 500, or to a 200, still counts.
func TestClientBindErrorsDoNotOpenTheBreaker(t *testing.T) {
	g := newGuard(t, core.Rule{Name: "orders-breaker", Resource: "POST /orders", Kind: core.KindBreaker,
		Strategy: "error-count", Threshold: 5, MinRequests: 1})
	r := gin.New()
	r.Use(sluicegin.Middleware(g))
	r.POST("/orders", func(c *gin.Context) {
		var order struct {
			Item string `json:"item" binding:"required"`
		}
		if c.BindJSON(&order) != nil { // 400, error attached (gin.ErrorTypeBind)
			return
		}
		c.String(http.StatusOK, "ordered "+order.Item)
	})
	r.GET("/fail", func(c *gin.Context) { _ = c.AbortWithError(http.StatusInternalServerError, assert.AnError) })
	r.GET("/soft", func(c *gin.Context) { _ = c.Error(assert.AnError); c.String(http.StatusOK, "partial") })
	r.GET("/unwritten", func(c *gin.Context) { _ = c.Error(assert.AnError) })
	srv := serve(t, r)
	post := func(body string) int {
		res, err := srv.Client().Post(srv.URL+"/orders", "application/json", strings.NewReader(body))
		require.NoError(t, err)
		res.Body.Close()
		return res.StatusCode
	}
	for range 20 {
		require.Equal(t, http.StatusBadRequest, post(`{"item": `))
	}
	assert.Equal(t, http.StatusOK, post(`{"item": "book"}`), "a good client after 20 malformed bodies of another")
	assert.Zero(t, mustStats(t, g, "POST /orders").Total.Error, "400s counted as errors")

	// A handler's own failures still count: an error attached to a 500, or
	// to a response the handler wrote as a success, or to none.
	for _, p := range []string{"/fail", "/soft", "/unwritten"} {
		do(t, srv, http.MethodGet, p)
		assert.EqualValues(t, 1, mustStats(t, g, "GET "+p).Total.Error, p)
	}
}
