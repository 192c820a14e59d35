package sluicehttp_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	sluicehttp "github.com/sluicekit/sluice/adapters/nethttp"
	"github.com/sluicekit/sluice/core"
)

// TestOversizedBodyClosesTheConnection: a handler limits the body it reads
// with http.MaxBytesReader (the idiom of net/http's docs), and a client
// sends a larger one on a kept-alive connection. net/http then answers
// with "Connection: close" and closes the connection, reading no more of
// the body: behind the middleware it must do the same, whether the
// handler puts the limited body in r.Body or keeps it to itself, and
// answers 413 or another status. Before, the middleware's writer hid the
// limit from net/http, which kept the connection and read up to 256 KB
// more of the body. A body within the limit keeps the connection.
func TestOversizedBodyClosesTheConnection(t *testing.T) {
	g, err := core.New()
	require.NoError(t, err)
	t.Cleanup(func() { _ = g.Close() })
	limited := func(inPlace bool, status int) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body := http.MaxBytesReader(w, r.Body, 10)
			if inPlace {
				r.Body = body
			}
			if _, err := io.ReadAll(body); err != nil {
				http.Error(w, err.Error(), status)
				return
			}
			_, _ = io.WriteString(w, "ok")
		})
	}
	for _, c := range []struct {
		name   string
		h      http.Handler
		status int
	}{
		{"plain", limited(true, 413), 413},
		{"middleware", sluicehttp.Middleware(g)(limited(true, 413)), 413},
		{"middleware, limited body kept", sluicehttp.Middleware(g)(limited(false, 413)), 413},
		{"middleware, 400", sluicehttp.Middleware(g)(limited(true, 400)), 400},
		{"wrap", sluicehttp.Wrap(g, limited(true, 413)), 413},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(c.h)
			t.Cleanup(srv.Close)
			conn, err := net.Dial("tcp", srv.Listener.Addr().String())
			require.NoError(t, err)
			defer conn.Close()
			br := bufio.NewReader(conn)
			post := func(size int) *http.Response {
				_, err = fmt.Fprintf(conn, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s", size, strings.Repeat("x", size))
				require.NoError(t, err)
				res, err := http.ReadResponse(br, nil)
				require.NoError(t, err)
				_, _ = io.Copy(io.Discard, res.Body)
				res.Body.Close()
				return res
			}
			res := post(5)
			require.Equal(t, http.StatusOK, res.StatusCode)
			require.False(t, res.Close, "a body within the limit keeps the connection")
			res = post(1000)
			assert.Equal(t, c.status, res.StatusCode)
			assert.True(t, res.Close, "Connection: close")
			require.NoError(t, conn.SetReadDeadline(time.Now().Add(5*time.Second)))
			_, err = br.ReadByte()
			assert.ErrorIs(t, err, io.EOF, "the server closes the connection")
		})
	}
}
