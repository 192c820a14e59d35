package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"time"

	sluicehttp "github.com/sluicekit/sluice/adapters/nethttp"
	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/examples/internal/exampleapp"
)

// The demo's routes, as net/http ServeMux patterns; the middleware names
// their resources the same way.
const (
	routeHello = "GET /hello"
	routeItems = "GET /items/{id}"
	routeSlow  = "GET /slow"
)

// slowFor is how long GET /slow takes.
const slowFor = 250 * time.Millisecond

// server is the demo's HTTP server.
type server struct {
	url  string // base URL clients use, e.g. http://127.0.0.1:41234
	srv  *http.Server
	done chan error // Serve's result
}

// startServer listens on addr (a random loopback port when "") and serves
// the demo's routes behind the sluicehttp middleware, and the Guard's
// dashboard at /debug/sluice/ and metrics at /metrics.
func startServer(addr string, guard *core.Guard, st *stats) (*server, error) {
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	h, err := exampleapp.Ops(guard, sluicehttp.Middleware(guard)(newMux(st)))
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("-addr %q: %w", addr, err)
	}
	s := &server{
		url: "http://" + dialAddr(ln.Addr()),
		srv: &http.Server{
			Handler:           h,
			ReadHeaderTimeout: 5 * time.Second,
			IdleTimeout:       30 * time.Second,
		},
		done: make(chan error, 1),
	}
	go func() { s.done <- s.srv.Serve(ln) }()
	return s, nil
}

// close shuts the server down, waiting a few seconds at most for requests
// in flight (curl's, with -addr) and for Serve to return.
func (s *server) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.srv.Shutdown(ctx); err != nil {
		_ = s.srv.Close()
	}
	<-s.done // http.ErrServerClosed
}

// dialAddr returns the host:port a client dials to reach a server listening
// on a: its own address, or loopback when it listens on every address.
func dialAddr(a net.Addr) string {
	ta, ok := a.(*net.TCPAddr)
	if !ok {
		return a.String()
	}
	ip := ta.IP
	if ip.IsUnspecified() {
		if ip.To4() != nil {
			ip = net.IPv4(127, 0, 0, 1)
		} else {
			ip = net.IPv6loopback
		}
	}
	return net.JoinHostPort(ip.String(), strconv.Itoa(ta.Port))
}

// newMux returns the demo's routes. Each handler counts the requests of the
// concurrency rules that apply to it while it runs, so the summary can show
// the peak in flight that the middleware admitted.
func newMux(st *stats) *http.ServeMux {
	mux := http.NewServeMux()
	mux.Handle(routeHello, st.track(routeHello, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = fmt.Fprintln(w, "hello from sluice")
	})))
	mux.Handle(routeItems, st.track(routeItems, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = fmt.Fprintf(w, "{\"id\":%s}\n", strconv.Quote(r.PathValue("id")))
	})))
	mux.Handle(routeSlow, st.track(routeSlow, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t := time.NewTimer(slowFor)
		defer t.Stop()
		select {
		case <-t.C:
		case <-r.Context().Done():
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = fmt.Fprintln(w, "slow answer")
	})))
	return mux
}
