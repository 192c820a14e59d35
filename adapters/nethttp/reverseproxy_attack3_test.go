package sluicehttp_test

import (
	"context"
	"io"
	"log"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	sluicehttp "github.com/sluicekit/sluice/adapters/nethttp"
	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/breaker"
)

// TestClientsHangingUpThroughAProxyOpenNoBreaker: the middleware guards an
// httputil.ReverseProxy, the gateway a breaker protects a backend with;
// clients send requests and hang up before the backend answers. The
// proxy then answers 502 to no one (its default ErrorHandler). A client
// giving up says nothing of the backend's health, and core.Entry.Exit
// promises that an error breaker does not count a caller that gave up.
// Before, each hang-up counted as a 502, and five of them opened the
// breaker against every later client.
func TestClientsHangingUpThroughAProxyOpenNoBreaker(t *testing.T) {
	arrived := make(chan struct{}, 1)
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		<-r.Context().Done()
	}))
	srv, g := guardedProxy(t, backend, core.Rule{Name: "b", Resource: "*", Kind: core.KindBreaker,
		Strategy: "error-ratio", Threshold: 0.5, MinRequests: 5})

	for i := range 10 {
		b := g.Snapshot().Rules[0].Breaker
		require.Equal(t, breaker.Closed, b.State, "after %d hang-ups, %d counted as failures", i, b.Bad)
		ctx, cancel := context.WithCancel(context.Background())
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/x", nil)
		require.NoError(t, err)
		done := make(chan struct{})
		go func() {
			defer close(done)
			if res, err := srv.Client().Do(req); err == nil {
				res.Body.Close()
			}
		}()
		select {
		case <-arrived:
		case <-time.After(10 * time.Second): // a hang guard, not a timing bound
			t.Fatal("the request never reached the backend")
		}
		cancel()
		<-done
		require.Eventually(t, func() bool { return g.Snapshot().Resources[0].InFlight == 0 }, 10*time.Second, time.Millisecond)
	}
}

// TestClientsHangingUpMidResponseOpenNoBreaker: as above, but the clients
// hang up while the proxy streams the backend's answer to them: its copy
// fails and it aborts the request with panic(http.ErrAbortHandler), as
// net/http asks. Before, every such abort counted as a failed request.
func TestClientsHangingUpMidResponseOpenNoBreaker(t *testing.T) {
	backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		chunk := make([]byte, 32<<10)
		for r.Context().Err() == nil {
			if _, err := w.Write(chunk); err != nil {
				return
			}
			w.(http.Flusher).Flush()
		}
	}))
	srv, g := guardedProxy(t, backend, core.Rule{Name: "b", Resource: "*", Kind: core.KindBreaker,
		Strategy: "error-ratio", Threshold: 0.5, MinRequests: 5})

	for i := range 10 {
		b := g.Snapshot().Rules[0].Breaker
		require.Equal(t, breaker.Closed, b.State, "after %d hang-ups, %d counted as failures", i, b.Bad)
		c := &http.Client{Transport: &http.Transport{}}
		res, err := c.Get(srv.URL + "/x")
		require.NoError(t, err)
		_, err = io.ReadFull(res.Body, make([]byte, 64<<10))
		require.NoError(t, err)
		c.Transport.(*http.Transport).CloseIdleConnections()
		res.Body.Close() // mid-body: the connection is closed
		require.Eventually(t, func() bool { return g.Snapshot().Resources[0].InFlight == 0 }, 10*time.Second, time.Millisecond)
	}
}

// guardedProxy returns a server of a reverse proxy to backend, logging
// nothing, guarded by a Guard with rule.
func guardedProxy(t *testing.T, backend *httptest.Server, rule core.Rule) (*httptest.Server, *core.Guard) {
	t.Helper()
	t.Cleanup(backend.Close)
	u, err := url.Parse(backend.URL)
	require.NoError(t, err)
	proxy := httputil.NewSingleHostReverseProxy(u)
	proxy.ErrorLog = log.New(io.Discard, "", 0)
	g, err := core.New(core.WithLogger(slog.New(slog.DiscardHandler)), core.WithRules(rule))
	require.NoError(t, err)
	t.Cleanup(func() { _ = g.Close() })
	h, err := sluicehttp.New(g)
	require.NoError(t, err)
	srv := httptest.NewUnstartedServer(h(proxy))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, g
}
