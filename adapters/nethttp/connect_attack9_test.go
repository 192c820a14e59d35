package sluicehttp_test

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	sluicehttp "github.com/sluicekit/sluice/adapters/nethttp"
)

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
	send := func(path string) int {
		c, err := net.Dial("tcp", srv.Listener.Addr().String())
		require.NoError(t, err)
		defer c.Close()
		fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: x\r\n\r\n", path)
		res, err := http.ReadResponse(bufio.NewReader(c), nil)
		require.NoError(t, err)
		return res.StatusCode
	}
	assert.Equal(t, http.StatusOK, send("/static/app.js"))
	assert.Equal(t, http.StatusOK, send("/static/"))
	assert.Equal(t, http.StatusTemporaryRedirect, send("/static"))
	st, _ := g.Stats("CONNECT /static/")
	assert.EqualValues(t, 1, st.Total.Pass, "the subtree served /static/app.js")
	st, _ = g.Stats("CONNECT /static/{$}")
	assert.EqualValues(t, 2, st.Total.Pass, "the index served /static/ and /static redirects to it")
}
