package sluicegin_test

import (
	"net/http"
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/sluicekit/sluice/adapters/adaptertest"
	sluicegin "github.com/sluicekit/sluice/adapters/gin"
	"github.com/sluicekit/sluice/core"
)

func TestRoutesCheckedAgainstRules(t *testing.T) {
	adaptertest.RouteCheck(t, func(t *testing.T, g *core.Guard) string {
		gin.SetMode(gin.ReleaseMode)
		r := gin.New()
		r.Use(sluicegin.Middleware(g, sluicegin.WithRoutes(r)))
		ok := func(c *gin.Context) { c.Status(http.StatusOK) }
		r.GET("/items/:id", ok)
		r.GET("/files/*path", ok)
		return serve(t, r).URL
	})
}
