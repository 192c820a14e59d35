package sluicehttp_test

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	sluicehttp "github.com/sluicekit/sluice/adapters/nethttp"
)

// TestConnectRedirectMintsNoResource: a ServeMux redirects a request
// whose path lacks the trailing slash of a pattern, and for a CONNECT
// request its Handler method returns the redirect's path as the pattern.
// Clients sending "CONNECT /users/<anything> HTTP/1.1" to a service with
// the pattern "/users/{id}/" made one resource each ("CONNECT
// /users/u0/", ...), raw paths that filled the Guard's resource table,
// metrics and dashboard. They are now the route's requests, "CONNECT
// /users/{id}/", redirected as before.
func TestConnectRedirectMintsNoResource(t *testing.T) {
	g := newGuard(t)
	mux := http.NewServeMux()
	mux.HandleFunc("/users/{id}/", ok)
	mux.HandleFunc("/static/", ok)
	srv := serve(t, sluicehttp.Middleware(g)(mux))
	send := func(path string) *http.Response { return sendConnect(t, srv, path) }
	for i := range 5 {
		res := send(fmt.Sprintf("/users/u%d", i))
		assert.Equal(t, http.StatusTemporaryRedirect, res.StatusCode)
		assert.Equal(t, fmt.Sprintf("/users/u%d/", i), res.Header.Get("Location"))
	}
	assert.Equal(t, http.StatusTemporaryRedirect, send("/static").StatusCode)
	assert.Equal(t, http.StatusOK, send("/users/u9/").StatusCode)
	var names []string
	for _, r := range g.Snapshot().Resources {
		names = append(names, r.Resource)
	}
	assert.ElementsMatch(t, []string{"CONNECT /users/{id}/", "CONNECT /static/"}, names)
	st, _ := g.Stats("CONNECT /users/{id}/")
	assert.EqualValues(t, 6, st.Total.Pass)
}

// TestConnectIntoASubtreeIsItsRoute: a CONNECT request the ServeMux serves
// by a subtree pattern ("/static/" for "/static/app.js") is a resource of
// that pattern, not of a more specific pattern of the subtree's root
// ("/static/{$}") that did not serve it; a CONNECT the mux redirects is
// still a resource of the route it is redirected to.
func TestConnectIntoASubtreeIsItsRoute(t *testing.T) {
	g := newGuard(t)
	mux := http.NewServeMux()
	mux.HandleFunc("/static/", func(w http.ResponseWriter, r *http.Request) { _, _ = fmt.Fprint(w, "subtree") })
	mux.HandleFunc("/static/{$}", func(w http.ResponseWriter, r *http.Request) { _, _ = fmt.Fprint(w, "index") })
	srv := serve(t, sluicehttp.Middleware(g)(mux))
	send := func(path string) int { return sendConnect(t, srv, path).StatusCode }
	assert.Equal(t, http.StatusOK, send("/static/app.js"))
	assert.Equal(t, http.StatusOK, send("/static/"))
	assert.Equal(t, http.StatusTemporaryRedirect, send("/static"))
	st, _ := g.Stats("CONNECT /static/")
	assert.EqualValues(t, 1, st.Total.Pass, "the subtree served /static/app.js")
	st, _ = g.Stats("CONNECT /static/{$}")
	assert.EqualValues(t, 2, st.Total.Pass, "the index served /static/ and /static redirects to it")
}

// sendConnect sends "CONNECT path" to srv on a connection of its own and
// returns the answer.
func sendConnect(t *testing.T, srv *httptest.Server, path string) *http.Response {
	t.Helper()
	c, err := net.Dial("tcp", srv.Listener.Addr().String())
	require.NoError(t, err)
	defer c.Close()
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: x\r\n\r\n", path)
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	require.NoError(t, err)
	return res
}
