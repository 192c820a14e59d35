package sluicehttp_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	sluicehttp "github.com/sluicekit/sluice/adapters/nethttp"
	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/breaker"
)

// uploadBackend returns a backend that reads each upload and answers 200,
// or 500 once failing is set.
func uploadBackend(failing *atomic.Bool) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if failing.Load() {
			w.WriteHeader(http.StatusInternalServerError)
		}
	}))
}

// TestClientsHangingUpMidUploadThroughAProxyOpenNoBreaker: the middleware
// guards an httputil.ReverseProxy under an error-ratio breaker; clients
// start an upload (Content-Length 1 MB), send part of it and hang up. The
// proxy's copy of the body to the backend fails and it answers 502 to no
// one. A client giving up mid-upload says nothing of the backend's health
// (core.Entry.Exit): ten such uploads must leave the breaker closed, and
// five uploads the backend fails then open it. (Held when written: the
// request's context has ended when the proxy answers.)
func TestClientsHangingUpMidUploadThroughAProxyOpenNoBreaker(t *testing.T) {
	var failing atomic.Bool
	backend := uploadBackend(&failing)
	srv, g := guardedProxy(t, backend, core.Rule{Name: "b", Resource: "*", Kind: core.KindBreaker,
		Strategy: "error-ratio", Threshold: 0.5, MinRequests: 5})

	inFlight := func(n int64) func() bool {
		return func() bool {
			res := g.Snapshot().Resources
			return len(res) == 1 && res[0].InFlight == n
		}
	}
	for i := range 10 {
		b := g.Snapshot().Rules[0].Breaker
		require.Equal(t, breaker.Closed, b.State, "after %d hang-ups, %d counted as failures", i, b.Bad)
		conn, err := net.Dial("tcp", srv.Listener.Addr().String())
		require.NoError(t, err)
		_, err = fmt.Fprintf(conn, "POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n\r\n%0*d", 10000, 0)
		require.NoError(t, err)
		require.Eventually(t, inFlight(1), 10*time.Second, time.Millisecond)
		require.NoError(t, conn.Close())
		require.Eventually(t, inFlight(0), 10*time.Second, time.Millisecond)
	}
	// An upload the backend fails still counts.
	failing.Store(true)
	for range 5 {
		res, err := srv.Client().Post(srv.URL+"/upload", "text/plain", nil)
		require.NoError(t, err)
		res.Body.Close()
	}
	require.Equal(t, breaker.Open, g.Snapshot().Rules[0].Breaker.State)
}

// TestMalformedUploadsThroughAProxyOpenNoBreaker: the middleware guards an
// httputil.ReverseProxy under an error-count breaker; a hostile client,
// still connected, sends uploads whose chunked body is malformed. The
// proxy cannot read the body it forwards and answers 502, though the
// backend is healthy: the request's failure is the client's, as a body
// the Transport's caller cannot read is the caller's. Before, 5 such
// uploads opened the breaker and every other client got 503. A backend
// failing still opens it.
func TestMalformedUploadsThroughAProxyOpenNoBreaker(t *testing.T) {
	var failing atomic.Bool
	backend := uploadBackend(&failing)
	srv, g := guardedProxy(t, backend, core.Rule{Name: "b", Resource: "*", Kind: core.KindBreaker,
		Strategy: "error-count", Threshold: 5, MinRequests: 1})

	for i := range 10 {
		conn, err := net.Dial("tcp", srv.Listener.Addr().String())
		require.NoError(t, err)
		_, err = fmt.Fprint(conn, "POST /upload HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\nzz\r\n")
		require.NoError(t, err)
		res, err := http.ReadResponse(bufio.NewReader(conn), nil)
		require.NoError(t, err, "upload %d", i)
		res.Body.Close()
		conn.Close()
		require.NotEqual(t, http.StatusServiceUnavailable, res.StatusCode, "upload %d: the breaker opened", i)
	}
	assert.Equal(t, breaker.Closed, g.Snapshot().Rules[0].Breaker.State)
	res, err := srv.Client().Post(srv.URL+"/upload", "text/plain", strings.NewReader("fine"))
	require.NoError(t, err)
	res.Body.Close()
	assert.Equal(t, http.StatusOK, res.StatusCode, "another client's upload")

	failing.Store(true)
	for range 5 {
		res, err := srv.Client().Post(srv.URL+"/upload", "text/plain", strings.NewReader("fine"))
		require.NoError(t, err)
		res.Body.Close()
	}
	assert.Equal(t, breaker.Open, g.Snapshot().Rules[0].Breaker.State, "a failing backend opens the breaker")
}

// TestBytesAfterAMalformedBodyAreNoRequest: a client sends an upload
// whose chunked body is malformed, followed on the same connection by
// another request, which a handler that reads and closes the body must
// never serve: net/http closes the connection after a body closed on a
// failed read, since what follows the bad chunk is no request. Before,
// the middleware's body wrapper hid the failed body from net/http, which
// kept the connection and served the bytes after the bad chunk as a
// request of their own (a smuggled GET got 200), also when the handler
// then panicked and a recovery middleware answered.
func TestBytesAfterAMalformedBodyAreNoRequest(t *testing.T) {
	g, err := core.New()
	require.NoError(t, err)
	t.Cleanup(func() { _ = g.Close() })
	var served atomic.Int64
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served.Add(1)
		_, err := io.ReadAll(r.Body)
		_ = r.Body.Close()
		if err != nil && r.URL.Path == "/panic" {
			panic(err)
		}
		if err != nil {
			w.WriteHeader(http.StatusBadRequest)
		}
	})
	recovery := func(next http.Handler) http.Handler { // a recovery middleware answering 400
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			defer func() {
				if recover() != nil {
					w.WriteHeader(http.StatusBadRequest)
				}
			}()
			next.ServeHTTP(w, r)
		})
	}
	for name, h := range map[string]http.Handler{"Middleware": recovery(sluicehttp.Middleware(g)(h)), "Wrap": recovery(sluicehttp.Wrap(g, h))} {
		for _, path := range []string{"/upload", "/panic"} {
			t.Run(name+path, func(t *testing.T) {
				served.Store(0)
				srv := httptest.NewServer(h)
				t.Cleanup(srv.Close)
				conn, err := net.Dial("tcp", srv.Listener.Addr().String())
				require.NoError(t, err)
				defer conn.Close()
				_, err = fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\nzz\r\n"+
					"GET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n", path)
				require.NoError(t, err)
				br := bufio.NewReader(conn)
				res, err := http.ReadResponse(br, nil)
				require.NoError(t, err)
				res.Body.Close()
				assert.Equal(t, http.StatusBadRequest, res.StatusCode)
				assert.True(t, res.Close, "Connection: close")
				require.NoError(t, conn.SetReadDeadline(time.Now().Add(5*time.Second)))
				_, err = http.ReadResponse(br, nil)
				assert.ErrorIs(t, err, io.ErrUnexpectedEOF, "the connection is closed")
				assert.EqualValues(t, 1, served.Load(), "requests served")
			})
		}
	}
}
