package sluiceecho_test

import (
	"bufio"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	sluiceecho "github.com/sluicekit/sluice/adapters/echo"
	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/breaker"
)

// TestMalformedUploadsOpenNoBreaker: the middleware guards, under an
// error-count breaker, a route served by an httputil.ReverseProxy
// (echo.WrapHandler) and one whose handler returns its failure to read
// the body; a hostile client, still connected, sends uploads whose
// chunked body is malformed. The proxy answers 502 and the handler 500,
// though nothing of the server failed: the failure is the client's.
// Before, 5 such uploads opened the breaker and every other client got
// 503. A backend failing still opens it.
func TestMalformedUploadsOpenNoBreaker(t *testing.T) {
	var failing atomic.Bool
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if failing.Load() {
			w.WriteHeader(http.StatusInternalServerError)
		}
	}))
	t.Cleanup(backend.Close)
	u, err := url.Parse(backend.URL)
	require.NoError(t, err)
	proxy := httputil.NewSingleHostReverseProxy(u)
	proxy.ErrorLog = log.New(io.Discard, "", 0)

	for _, path := range []string{"/upload", "/read"} {
		t.Run(path, func(t *testing.T) {
			g, err := core.New(core.WithLogger(slog.New(slog.DiscardHandler)), core.WithRules(core.Rule{Name: "b",
				Resource: "*", Kind: core.KindBreaker, Strategy: "error-count", Threshold: 5, MinRequests: 1}))
			require.NoError(t, err)
			t.Cleanup(func() { _ = g.Close() })
			e := echo.New()
			e.Use(sluiceecho.Middleware(g))
			e.POST("/upload", echo.WrapHandler(proxy))
			e.POST("/read", func(c echo.Context) error {
				if _, err := io.ReadAll(c.Request().Body); err != nil {
					return err
				}
				if failing.Load() {
					return c.NoContent(http.StatusInternalServerError)
				}
				return c.NoContent(http.StatusOK)
			})
			srv := serve(t, e)
			failing.Store(false)

			for i := range 10 {
				conn, err := net.Dial("tcp", srv.Listener.Addr().String())
				require.NoError(t, err)
				_, err = fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\nzz\r\n", path)
				require.NoError(t, err)
				res, err := http.ReadResponse(bufio.NewReader(conn), nil)
				require.NoError(t, err, "upload %d", i)
				res.Body.Close()
				conn.Close()
				require.NotEqual(t, http.StatusServiceUnavailable, res.StatusCode, "upload %d: the breaker opened", i)
			}
			assert.Equal(t, breaker.Closed, g.Snapshot().Rules[0].Breaker.State)
			post := func() int {
				res, err := srv.Client().Post(srv.URL+path, "text/plain", strings.NewReader("fine"))
				require.NoError(t, err)
				res.Body.Close()
				return res.StatusCode
			}
			assert.Equal(t, http.StatusOK, post(), "another client's upload")

			failing.Store(true)
			for range 5 {
				post()
			}
			assert.Equal(t, breaker.Open, g.Snapshot().Rules[0].Breaker.State, "a failing backend opens the breaker")
		})
	}
}

// TestBytesAfterAMalformedBodyAreNoRequest: a client sends an upload
// whose chunked body is malformed, followed on the same connection by
// another request, which a handler that reads and closes the body must
// never serve: net/http closes the connection after a body closed on a
// failed read, since what follows the bad chunk is no request. The
// middleware's body wrapper must not hide the failed body from net/http,
// also when the handler then panics and a recovery answers 500.
func TestBytesAfterAMalformedBodyAreNoRequest(t *testing.T) {
	var served atomic.Int64
	h := func(c echo.Context) error {
		served.Add(1)
		_, err := io.ReadAll(c.Request().Body)
		_ = c.Request().Body.Close()
		if err != nil && c.Path() == "/panic" {
			panic(err)
		}
		if err != nil {
			return c.NoContent(http.StatusBadRequest)
		}
		return c.NoContent(http.StatusOK)
	}
	e := echo.New()
	e.Use(func(next echo.HandlerFunc) echo.HandlerFunc { // as middleware.Recover
		return func(c echo.Context) (err error) {
			defer func() {
				if recover() != nil {
					err = c.NoContent(http.StatusInternalServerError)
				}
			}()
			return next(c)
		}
	})
	e.Use(sluiceecho.Middleware(newGuard(t)))
	e.POST("/upload", h)
	e.POST("/panic", h)
	e.GET("/smuggled", h)
	srv := serve(t, e)
	for path, status := range map[string]int{"/upload": http.StatusBadRequest, "/panic": http.StatusInternalServerError} {
		served.Store(0)
		conn, err := net.Dial("tcp", srv.Listener.Addr().String())
		require.NoError(t, err)
		_, err = fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\nzz\r\n"+
			"GET /smuggled HTTP/1.1\r\nHost: x\r\n\r\n", path)
		require.NoError(t, err)
		br := bufio.NewReader(conn)
		res, err := http.ReadResponse(br, nil)
		require.NoError(t, err)
		res.Body.Close()
		assert.Equal(t, status, res.StatusCode, path)
		assert.True(t, res.Close, "%s: Connection: close", path)
		require.NoError(t, conn.SetReadDeadline(time.Now().Add(5*time.Second)))
		_, err = http.ReadResponse(br, nil)
		assert.ErrorIs(t, err, io.ErrUnexpectedEOF, "%s: the connection is closed", path)
		assert.EqualValues(t, 1, served.Load(), "%s: requests served", path)
		conn.Close()
	}
}
