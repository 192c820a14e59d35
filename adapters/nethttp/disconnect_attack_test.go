package sluicehttp_test

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	sluicehttp "github.com/sluicekit/sluice/adapters/nethttp"
	"github.com/sluicekit/sluice/core"
)

// TestClientsHangingUpReleaseTheirSlots: 60 clients of 20 users, a third
// of them with 5000-byte invalid UTF-8 user IDs (one value once cut to 256
// bytes), send requests that a concurrency rule and a per-user one admit
// and whose handler waits for the request to end (a seventh of them abort
// with a panic), then hang up mid-request: every slot comes back, and each
// user gets in again.
func TestClientsHangingUpReleaseTheirSlots(t *testing.T) {
	g, err := core.New(core.WithRules(
		core.Rule{Name: "c", Resource: "GET /slow", Kind: core.KindConcurrency, Limit: 100},
		core.Rule{Name: "u", Resource: "GET /slow", Kind: core.KindHotspot, Param: "header:X-User", Algorithm: core.AlgorithmConcurrency, Limit: 1},
	))
	require.NoError(t, err)
	t.Cleanup(func() { _ = g.Close() })
	mux := http.NewServeMux()
	mux.HandleFunc("GET /slow", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Panic") != "" {
			panic(http.ErrAbortHandler)
		}
		<-r.Context().Done()
	})
	h, err := sluicehttp.New(g)
	require.NoError(t, err)
	srv := httptest.NewServer(h(mux))
	t.Cleanup(srv.Close)
	addr := strings.TrimPrefix(srv.URL, "http://")
	long := strings.Repeat("\xff", 5000)
	var conns []net.Conn
	for i := range 60 {
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		user := fmt.Sprintf("u%d", i%20)
		if i%3 == 0 {
			user = long + user
		}
		extra := ""
		if i%7 == 0 {
			extra = "X-Panic: 1\r\n"
		}
		_, err = fmt.Fprintf(c, "GET /slow HTTP/1.1\r\nHost: x\r\nX-User: %s\r\n%s\r\n", user, extra)
		require.NoError(t, err)
		conns = append(conns, c)
	}
	inFlight := func(n int64) func() bool {
		return func() bool { st, _ := g.Stats("GET /slow"); return st.InFlight == n }
	}
	// One request of each user in flight, and one of the long IDs.
	require.Eventually(t, inFlight(21), 10*time.Second, 10*time.Millisecond)
	for _, c := range conns {
		_ = c.Close()
	}
	require.Eventually(t, inFlight(0), 10*time.Second, 10*time.Millisecond, "slots kept by clients gone")
	for i := range 20 {
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		_, err = fmt.Fprintf(c, "GET /slow HTTP/1.1\r\nHost: x\r\nX-User: u%d\r\n\r\n", i)
		require.NoError(t, err)
		conns = append(conns, c)
	}
	require.Eventually(t, inFlight(20), 10*time.Second, 10*time.Millisecond, "a user kept out")
	for _, c := range conns {
		_ = c.Close()
	}
}
