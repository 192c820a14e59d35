package sluiceecho_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/sluicekit/sluice/adapters/adaptertest"
	sluiceecho "github.com/sluicekit/sluice/adapters/echo"
	"github.com/sluicekit/sluice/core"
)

func TestRoutesCheckedAgainstRules(t *testing.T) {
	adaptertest.RouteCheck(t, func(t *testing.T, g *core.Guard) string {
		e := echo.New()
		e.Use(sluiceecho.Middleware(g))
		ok := func(c echo.Context) error { return c.NoContent(http.StatusOK) }
		e.GET("/items/:id", ok)
		e.GET("/files/*", ok)
		srv := httptest.NewServer(e)
		t.Cleanup(srv.Close)
		return srv.URL
	})
}
