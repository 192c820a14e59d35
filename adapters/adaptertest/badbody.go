package adaptertest

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/breaker"
)

// upload is the handler of POST /upload and POST /upload-panic: it reads
// the body and closes it; when the read failed, it answers 502, as a
// reverse proxy does for a body it cannot forward, or panics when panics
// is set.
func upload(panics bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		_, err := io.ReadAll(r.Body)
		_ = r.Body.Close()
		switch {
		case err != nil && panics:
			panic(err)
		case err != nil:
			w.WriteHeader(http.StatusBadGateway)
		}
	}
}

// testMalformedBody: a client, still connected, sends uploads whose
// chunked body is malformed, each followed on its connection by a GET
// /hello, under an error-count breaker. The handler's failure (a 502 or a
// panic) after reading the body failed is the client's: before, in gin
// and echo, 5 such uploads opened the breaker and every other client got
// 503. And net/http closes the connection after a body closed on a failed
// read, since what follows the bad chunk is no request: the adapter's body
// wrapper must not hide it, or the GET is served (it was, with a 200, in
// every adapter). A handler failing still opens the breaker.
func testMalformedBody(t *testing.T, f factory) {
	for _, path := range []string{"/upload", "/upload-panic"} {
		t.Run(path[1:], func(t *testing.T) {
			s := start(t, f, Options{}, core.Rule{Name: "b", Resource: "*", Kind: core.KindBreaker,
				Strategy: "error-count", Threshold: 5, MinRequests: 1})
			addr := strings.TrimPrefix(s.url, "http://")
			for i := range 10 {
				conn, err := net.Dial("tcp", addr)
				require.NoError(t, err)
				_, err = fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\nzz\r\n"+
					"GET /hello HTTP/1.1\r\nHost: x\r\n\r\n", path)
				require.NoError(t, err)
				br := bufio.NewReader(conn)
				res, err := http.ReadResponse(br, nil)
				require.NoError(t, err, "upload %d", i)
				res.Body.Close()
				require.NotEqual(t, http.StatusServiceUnavailable, res.StatusCode, "upload %d: the breaker opened", i)
				assert.True(t, res.Close, "upload %d: Connection: close", i)
				require.NoError(t, conn.SetReadDeadline(time.Now().Add(10*time.Second)))
				_, err = http.ReadResponse(br, nil)
				assert.Error(t, err, "upload %d: the connection is closed", i)
				require.NoError(t, conn.Close())
			}
			assert.Zero(t, s.callsOf("/hello"), "requests served after a bad chunk")
			assert.Equal(t, breaker.Closed, s.guard.Snapshot().Rules[0].Breaker.State)
			res, err := s.client.Post(s.url+path, "text/plain", strings.NewReader("fine"))
			require.NoError(t, err)
			res.Body.Close()
			assert.Equal(t, http.StatusOK, res.StatusCode, "another client's upload")
			for range 5 {
				s.get("/fail")
			}
			assert.Equal(t, breaker.Open, s.guard.Snapshot().Rules[0].Breaker.State, "a failing handler opens the breaker")
		})
	}
}
