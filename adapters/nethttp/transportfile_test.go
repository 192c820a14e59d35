package sluicehttp_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/iotest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	sluicehttp "github.com/sluicekit/sluice/adapters/nethttp"
	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/breaker"
)

// sendfileConn is a client's TCP connection that records whether net/http
// gave its ReadFrom, which sends a request body, a body that sendfile can
// read (a syscall.Conn, inside the io.LimitedReader of its Content-Length).
type sendfileConn struct {
	*net.TCPConn
	sendfile *atomic.Bool
}

func (c sendfileConn) ReadFrom(r io.Reader) (int64, error) {
	if lr, ok := r.(*io.LimitedReader); ok {
		r = lr.R
	}
	if _, ok := r.(syscall.Conn); ok {
		c.sendfile.Store(true)
	}
	return c.TCPConn.ReadFrom(r)
}

// fileUploadClient returns a client through NewTransport whose connections
// record in sendfile whether a body was sent with sendfile.
func fileUploadClient(t *testing.T, g *core.Guard, sendfile *atomic.Bool) *http.Client {
	base := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return sendfileConn{c.(*net.TCPConn), sendfile}, nil
	}}
	t.Cleanup(base.CloseIdleConnections)
	tr, err := sluicehttp.NewTransport(g, base)
	require.NoError(t, err)
	return &http.Client{Transport: tr, Timeout: 20 * time.Second}
}

// writeFile writes a file of size bytes and returns its path.
func writeFile(t *testing.T, name string, size int) string {
	path := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(path, bytes.Repeat([]byte("x"), size), 0o600))
	return path
}

// TestTransportSendsFilesWithSendfile: a file uploaded through the
// Transport reaches the connection as a file net/http sends with sendfile,
// as through net/http's own Transport, and the call's outcome is still
// told apart: a file shorter than its Content-Length is the caller's
// failure (it opens no breaker), and an upstream that takes the whole
// file and hangs up without answering is the upstream's (it does). Before,
// the body reached the connection wrapped, copied through a 32 KB buffer.
func TestTransportSendsFilesWithSendfile(t *testing.T) {
	var got atomic.Int64
	var hangUp atomic.Bool
	srv := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		got.Store(n)
		if hangUp.Load() {
			c, _, err := http.NewResponseController(w).Hijack()
			if err == nil {
				c.Close()
			}
		}
	}))
	g := newGuard(t, core.Rule{Name: "upstream-breaker", Resource: "* 127.0.0.1", Kind: core.KindBreaker,
		Strategy: breaker.ErrorCount, Threshold: 1, MinRequests: 1, Window: time.Minute, OpenFor: time.Minute})
	var sendfile atomic.Bool
	c := fileUploadClient(t, g, &sendfile)
	upload := func(path string, length int64) (int, error) {
		f, err := os.Open(path)
		require.NoError(t, err)
		req, err := http.NewRequest(http.MethodPut, srv.URL+"/upload", f)
		require.NoError(t, err)
		req.ContentLength = length
		return send(c, req)
	}
	const size = 1 << 20
	file := writeFile(t, "upload", size)

	status, err := upload(file, size)
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, status)
	assert.EqualValues(t, size, got.Load())
	assert.True(t, sendfile.Load(), "the file reaches the connection as a file")

	short := writeFile(t, "short", 100)
	for i := range 2 {
		_, err = upload(short, 1000)
		require.ErrorContains(t, err, "ContentLength=1000 with Body length 100", "upload %d: the caller's failure", i)
	}
	status, err = upload(file, size)
	require.NoError(t, err, "no breaker opened for the short files")
	assert.Equal(t, http.StatusOK, status)

	hangUp.Store(true)
	_, err = upload(file, size)
	require.Error(t, err)
	assert.NotErrorAs(t, err, new(*core.BlockedError))
	hangUp.Store(false)
	_, err = upload(file, size)
	assert.Equal(t, core.KindBreaker, blockedBy(t, err).Kind, "the upstream's failure opened the breaker")
}

// TestTransportWrapsTheBodyOfARetry: net/http's Transport sends an
// idempotent request again (here a PUT with an Idempotency-Key), with the body GetBody rebuilds, when the
// upstream closes a reused connection without answering. When reading
// that body fails, the caller failed, not the upstream: the breaker stays
// closed. Before, the rebuilt body was sent as it was, and its failure
// opened the breaker on the host.
func TestTransportWrapsTheBodyOfARetry(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	served := make(chan struct{})
	go func() { // answers a request, takes the next and hangs up; then answers each connection's first
		defer close(served)
		for i := 0; ; i++ {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			br := bufio.NewReader(c)
			for j := 0; ; j++ {
				req, err := http.ReadRequest(br)
				if err != nil {
					break
				}
				_, err = io.Copy(io.Discard, req.Body)
				if err != nil || i == 0 && j == 1 {
					break
				}
				_, _ = io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
			}
			c.Close()
		}
	}()
	t.Cleanup(func() { ln.Close(); <-served })

	g := newGuard(t, core.Rule{Name: "upstream-breaker", Resource: "* 127.0.0.1", Kind: core.KindBreaker,
		Strategy: breaker.ErrorCount, Threshold: 1, MinRequests: 1, Window: time.Minute, OpenFor: time.Minute})
	base := &http.Transport{}
	t.Cleanup(base.CloseIdleConnections)
	tr, err := sluicehttp.NewTransport(g, base)
	require.NoError(t, err)
	c := &http.Client{Transport: tr, Timeout: 20 * time.Second}
	url := "http://" + ln.Addr().String() + "/upload"

	status, err := send(c, mustRequest(t, http.MethodGet, url, nil))
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, status)

	var rebuilt atomic.Int32
	req := mustRequest(t, http.MethodPut, url, bytes.NewReader([]byte("hello")))
	req.Header.Set("Idempotency-Key", "1") // replayable
	req.GetBody = func() (io.ReadCloser, error) {
		rebuilt.Add(1)
		return io.NopCloser(iotest.ErrReader(errors.New("the file went away"))), nil
	}
	_, err = send(c, req)
	require.ErrorContains(t, err, "the file went away")
	require.EqualValues(t, 1, rebuilt.Load(), "net/http sent the request again")

	status, err = send(c, mustRequest(t, http.MethodGet, url, nil))
	require.NoError(t, err, "the caller's body opened no breaker")
	assert.Equal(t, http.StatusOK, status)
}

func mustRequest(t *testing.T, method, url string, body io.Reader) *http.Request {
	req, err := http.NewRequest(method, url, body)
	require.NoError(t, err)
	return req
}
