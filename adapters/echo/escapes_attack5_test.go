package sluiceecho_test

import (
	"net/http"
	"testing"

	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/assert"

	"github.com/sluicekit/sluice/core"
)

// TestPathParamDecodedAsNetHTTP: echo gives a route parameter as sent
// ("%62aduser") when the request's path has escapes it does not write
// itself, and decoded otherwise. The path param is the value decoded, as
// net/http and gin give it, so that an override blocking a user
// ("baduser": 0) holds however the path spells it, as does a per-user
// limit. Before, /users/%62aduser passed the override, and each spelling
// was a value of its own. A value decoded once ("%62" from %2562) is not
// decoded again.
func TestPathParamDecodedAsNetHTTP(t *testing.T) {
	g := newGuard(t, core.Rule{Name: "per-user", Resource: "GET /users/{id}", Kind: core.KindHotspot,
		Param: "path:id", Limit: 1, Overrides: map[string]int64{"baduser": 0}})
	e := newEchoWith(g)
	e.GET("/users/:id", func(c echo.Context) error { return c.String(http.StatusOK, c.Param("id")) })
	srv := serve(t, e)
	for _, p := range []string{"/users/baduser", "/users/%62aduser", "/users/bad%75ser"} {
		assert.Equal(t, http.StatusForbidden, do(t, srv, "GET", p), p)
	}
	assert.Equal(t, http.StatusOK, do(t, srv, "GET", "/users/alice"))
	assert.Equal(t, http.StatusTooManyRequests, do(t, srv, "GET", "/users/%61lice"))
	assert.Equal(t, http.StatusOK, do(t, srv, "GET", "/users/%2562aduser"), `the user "%62aduser"`)
}
