package sluicehttp_test

import (
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	sluicehttp "github.com/sluicekit/sluice/adapters/nethttp"
	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/breaker"
)

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
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if failing.Load() {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		_, _ = io.Copy(io.Discard, r.Body)
	}))
	t.Cleanup(backend.Close)
	u, err := url.Parse(backend.URL)
	require.NoError(t, err)
	proxy := httputil.NewSingleHostReverseProxy(u)
	proxy.ErrorLog = nil
	g, err := core.New(core.WithLogger(slog.New(slog.DiscardHandler)), core.WithRules(core.Rule{Name: "b", Resource: "*", Kind: core.KindBreaker,
		Strategy: "error-ratio", Threshold: 0.5, MinRequests: 5}))
	require.NoError(t, err)
	t.Cleanup(func() { _ = g.Close() })
	h, err := sluicehttp.New(g)
	require.NoError(t, err)
	srv := httptest.NewServer(h(proxy))
	t.Cleanup(srv.Close)

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
