package exampleapp

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"
)

// defaultRules is rules.yaml, the rules the examples load when given none.
//
//go:embed rules.yaml
var defaultRules []byte

// DefaultRules returns the default rules file's content.
func DefaultRules() []byte { return append([]byte(nil), defaultRules...) }

// Hello answers GET /hello.
func Hello(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = io.WriteString(w, "hello\n")
}

// Item answers GET /items/{id}.
func Item(w http.ResponseWriter, id string) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]string{"id": id, "name": "item " + id})
}

// DefaultSlow and MaxSlow bound GET /slow's sleep.
const (
	DefaultSlow = 50 * time.Millisecond
	MaxSlow     = 10 * time.Second
)

// Slow answers GET /slow?ms=N after sleeping N milliseconds (DefaultSlow
// without ms, at most MaxSlow), or less when the client goes away.
func Slow(w http.ResponseWriter, r *http.Request) {
	d := DefaultSlow
	if v := r.URL.Query().Get("ms"); v != "" {
		ms, err := strconv.Atoi(v)
		if err != nil || ms < 0 {
			http.Error(w, "ms must be a whole number of milliseconds", http.StatusBadRequest)
			return
		}
		d = min(time.Duration(ms)*time.Millisecond, MaxSlow)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-r.Context().Done():
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = io.WriteString(w, "slept "+d.String()+"\n")
}

// Fail answers GET /fail with 500.
func Fail(w http.ResponseWriter) {
	http.Error(w, "this route always fails", http.StatusInternalServerError)
}

// Serve serves h on addr until ctx ends, then shuts down gracefully,
// letting requests in flight finish (for up to 15 seconds). It calls ready
// with the address it listens on (useful with port 0) once it accepts
// connections. It returns nil after a graceful shutdown.
func Serve(ctx context.Context, addr string, h http.Handler, ready func(addr string)) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	if ready != nil {
		ready(ln.Addr().String())
	}
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil {
		return err
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
