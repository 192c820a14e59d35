package sluicehttp_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	sluicehttp "github.com/sluicekit/sluice/adapters/nethttp"
	"github.com/sluicekit/sluice/core"
)

// panicking is a base RoundTripper (a user's, wrapping the default one)
// that panics on its first call.
type panicking struct{ once sync.Once }

func (p *panicking) RoundTrip(r *http.Request) (res *http.Response, err error) {
	p.once.Do(func() { panic("base transport bug") })
	return http.DefaultTransport.RoundTrip(r)
}

// TestTransportPanicFreesSlot: a base RoundTripper that panics (and a
// caller, such as net/http's server, that recovers) does not keep the
// call's concurrency slot: the next call is admitted, and the panic is a
// failure for breakers.
func TestTransportPanicFreesSlot(t *testing.T) {
	u := newUpstream(t)
	g := newGuard(t, core.Rule{Name: "one-at-a-time", Resource: "* 127.0.0.1", Kind: core.KindConcurrency, Limit: 1})
	tr, err := sluicehttp.NewTransport(g, &panicking{})
	require.NoError(t, err)
	c := &http.Client{Transport: tr}
	func() {
		defer func() { assert.Equal(t, "base transport bug", recover()) }()
		_, _ = call(c, u, "/panics")
	}()
	status, err := call(c, u, "/next")
	require.NoError(t, err, "the panicked call's slot is free")
	assert.Equal(t, http.StatusOK, status)
	st, _ := g.Stats("GET 127.0.0.1")
	assert.Zero(t, st.InFlight)
	assert.Equal(t, int64(1), st.Total.Error, "the panicked call failed")
}

// TestTransportSwitchingProtocols: the body of a 101 response is still the
// io.ReadWriteCloser net/http gives (WebSocket clients write to it), and
// the call holds its slot until it is closed.
func TestTransportSwitchingProtocols(t *testing.T) {
	srv := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, rw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		_, _ = rw.WriteString("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n")
		_ = rw.Flush()
		line, _ := rw.ReadString('\n') // echo one line back
		_, _ = rw.WriteString(line)
		_ = rw.Flush()
	}))
	g := newGuard(t, core.Rule{Name: "one-at-a-time", Resource: "* 127.0.0.1", Kind: core.KindConcurrency, Limit: 1})
	tr, err := sluicehttp.NewTransport(g, nil)
	require.NoError(t, err)
	c := &http.Client{Transport: tr}
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, srv.URL, nil)
	require.NoError(t, err)
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", "echo")
	res, err := c.Do(req)
	require.NoError(t, err)
	require.Equal(t, http.StatusSwitchingProtocols, res.StatusCode)
	rw, ok := res.Body.(io.ReadWriteCloser)
	require.True(t, ok, "the body of a 101 is writable, as net/http gives it: %T", res.Body)
	_, err = io.WriteString(rw, "hello\n")
	require.NoError(t, err)
	line, err := bufio.NewReader(rw).ReadString('\n')
	require.NoError(t, err)
	assert.Equal(t, "hello\n", line)
	_, err = c.Get(srv.URL)
	var b *core.BlockedError
	assert.True(t, errors.As(err, &b), "the upgraded connection holds the slot: %v", err)
	require.NoError(t, rw.Close())
	st, _ := g.Stats("GET 127.0.0.1")
	assert.Zero(t, st.InFlight)
}

// TestTransportRedirectsAndCancel: under a concurrency limit of 1, a chain
// of redirects is followed (each hop's slot is freed before the next is
// asked for), and a call cancelled while its body streams frees its slot
// when the caller closes the body.
func TestTransportRedirectsAndCancel(t *testing.T) {
	stall := make(chan struct{})
	srv := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/r3":
			_, _ = io.WriteString(w, "done")
		case "/stall":
			_, _ = io.WriteString(w, "part")
			http.NewResponseController(w).Flush()
			select {
			case <-stall:
			case <-r.Context().Done():
			}
		default:
			http.Redirect(w, r, "/r"+string(r.URL.Path[2]+1), http.StatusTemporaryRedirect) // /r0 to /r1 ...
		}
	}))
	defer close(stall)
	g := newGuard(t, core.Rule{Name: "one-at-a-time", Resource: "* 127.0.0.1", Kind: core.KindConcurrency, Limit: 1})
	tr, err := sluicehttp.NewTransport(g, nil)
	require.NoError(t, err)
	c := &http.Client{Transport: tr}
	res, err := c.Post(srv.URL+"/r0", "text/plain", http.NoBody)
	require.NoError(t, err)
	body, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	require.NoError(t, res.Body.Close())
	assert.Equal(t, "done", string(body))

	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/stall", nil)
	require.NoError(t, err)
	res, err = c.Do(req)
	require.NoError(t, err)
	cancel()
	_, err = io.ReadAll(res.Body)
	assert.ErrorIs(t, err, context.Canceled)
	require.NoError(t, res.Body.Close())
	st, _ := g.Stats("GET 127.0.0.1")
	assert.Zero(t, st.InFlight)
	assert.Equal(t, int64(1), st.Total.Error, "the cancelled call failed")
	res, err = c.Get(srv.URL + "/r3")
	require.NoError(t, err, "the slot is free")
	require.NoError(t, res.Body.Close())
}
