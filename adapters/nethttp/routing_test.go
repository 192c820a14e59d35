package sluicehttp_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	sluicehttp "github.com/sluicekit/sluice/adapters/nethttp"
)

// echoRoute answers with what the handler sees of the routing: the
// pattern and the path values the patterns below have.
func echoRoute(name string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "%s pattern=%q id=%q rest=%q ver=%q", name, r.Pattern,
			r.PathValue("id"), r.PathValue("rest"), r.PathValue("ver"))
	}
}

// routingMux is a ServeMux with static, wildcard, subtree, host and
// method-less patterns.
func routingMux() *http.ServeMux {
	mux := http.NewServeMux()
	mux.Handle("GET /hello", echoRoute("hello"))
	mux.Handle("GET /items/{id}", echoRoute("item"))
	mux.Handle("/files/{rest...}", echoRoute("files"))
	mux.Handle("/static/", echoRoute("static"))
	mux.Handle("/tree/", echoRoute("tree"))
	mux.Handle("POST /only-post", echoRoute("post"))
	mux.Handle("example.com/host", echoRoute("host"))
	mux.Handle("x/", echoRoute("host-x")) // every path of the host rawStatus sends
	mux.Handle("GET /exact/{$}", echoRoute("exact"))
	mux.Handle("GET /api/v1/static", echoRoute("api-static"))
	mux.Handle("GET /api/{ver}/dyn", echoRoute("api-dyn"))
	return mux
}

// exchange is what a client sees of a response.
type exchange struct {
	status         int
	location, body string
	allow          string
}

func fetch(t *testing.T, srv *httptest.Server, method, path, host string) exchange {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+path, nil)
	require.NoError(t, err)
	if host != "" {
		req.Host = host
	}
	client := *srv.Client()
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	res, err := client.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return exchange{res.StatusCode, res.Header.Get("Location"), string(body), res.Header.Get("Allow")}
}

// rawStatus sends a raw request line and returns the response's status line.
func rawStatus(t *testing.T, srv *httptest.Server, requestLine string) string {
	t.Helper()
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	require.NoError(t, err)
	defer conn.Close()
	_, err = io.WriteString(conn, requestLine+"\r\nHost: x\r\nConnection: close\r\n\r\n")
	require.NoError(t, err)
	line, err := bufio.NewReader(conn).ReadString('\n')
	require.NoError(t, err)
	return strings.TrimSpace(line)
}

// TestMiddlewareServesAsServeMux compares Middleware around a ServeMux,
// which serves some requests through the handler it found when naming them
// instead of routing them again, with the ServeMux alone: every handler
// must see the same pattern and path values, and clients the same
// responses (redirects, 404, 405, the "*" request), directly and behind
// another ServeMux.
func TestMiddlewareServesAsServeMux(t *testing.T) {
	g := newGuard(t) // no rules: every request passes
	nested := func(h http.Handler) http.Handler {
		outer := http.NewServeMux()
		outer.Handle("/api/{ver}/", h)
		outer.Handle("/", h)
		return outer
	}
	for _, tc := range []struct {
		name        string
		bare, guard http.Handler
	}{
		{"direct", routingMux(), sluicehttp.Middleware(g)(routingMux())},
		{"behind a ServeMux", nested(routingMux()), nested(sluicehttp.Middleware(g)(routingMux()))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bare, guarded := serve(t, tc.bare), serve(t, tc.guard)
			for _, rq := range []struct{ method, path, host string }{
				{"GET", "/hello", ""},
				{"HEAD", "/hello", ""},
				{"GET", "/items/42", ""},
				{"GET", "/items/caf%C3%A9", ""},
				{"GET", "/files/a/b%2Fc", ""},
				{"GET", "/static/x/y", ""},
				{"GET", "/tree", ""},
				{"GET", "/tree/", ""},
				{"GET", "/a/../hello", ""},
				{"GET", "//hello", ""},
				{"GET", "/only-post", ""},
				{"POST", "/only-post", ""},
				{"GET", "/host", "example.com"},
				{"GET", "/host", "other.example"},
				{"GET", "/any/path", "x"},
				{"GET", "/exact/", ""},
				{"GET", "/exact/more", ""},
				{"GET", "/api/v1/static", ""},
				{"GET", "/api/v2/dyn", ""},
				{"GET", "/nowhere", ""},
			} {
				want := fetch(t, bare, rq.method, rq.path, rq.host)
				got := fetch(t, guarded, rq.method, rq.path, rq.host)
				assert.Equal(t, want, got, "%s %s (host %q)", rq.method, rq.path, rq.host)
			}
			assert.Equal(t, rawStatus(t, bare, "GET * HTTP/1.1"), rawStatus(t, guarded, "GET * HTTP/1.1"))
		})
	}
}

// TestMiddlewareServesAsServeMux121 runs TestMiddlewareServesAsServeMux in
// a process with the ServeMux of Go 1.21 (GODEBUG httpmuxgo121=1), which
// sets no r.Pattern: Middleware must then leave all routing to it.
func TestMiddlewareServesAsServeMux121(t *testing.T) {
	if strings.Contains(os.Getenv("GODEBUG"), "httpmuxgo121=1") {
		t.Skip("in the child process")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestMiddlewareServesAsServeMux$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), "GODEBUG=httpmuxgo121=1")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "--- PASS: TestMiddlewareServesAsServeMux ")
}
