package extractors_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/extractors"
)

// TestClientIPHeaderThroughProxy sends spoofed forwarding headers from a
// client at 127.0.0.2 through a real proxy at 127.0.0.1 that sets one
// header to the client's address and passes the others on as they came (as
// nginx with only "proxy_set_header X-Real-IP $remote_addr" does), to a
// backend whose Extractor trusts the proxy. Naming the proxy's header with
// WithClientIPHeader, the ip param is the client's address whatever the
// client sends; by default a spoofed X-Forwarded-For is read first.
func TestClientIPHeaderThroughProxy(t *testing.T) {
	const client = "127.0.0.2"
	clientTransport := &http.Transport{DialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(client)}}).DialContext}
	t.Cleanup(clientTransport.CloseIdleConnections)
	spoofs := [][]string{
		{"X-Forwarded-For", "203.0.113.9"},
		{"X-Real-IP", "203.0.113.9"},
		{"Forwarded", "for=203.0.113.9"},
		{"X-Forwarded-For", "203.0.113.9", "X-Real-IP", "203.0.113.8", "Forwarded", "for=203.0.113.7"},
	}
	for _, proxy := range []struct {
		header string
		set    func(h http.Header, addr string)
	}{
		{"X-Real-IP", func(h http.Header, addr string) { h.Set("X-Real-IP", addr) }},
		{"Forwarded", func(h http.Header, addr string) { h.Add("Forwarded", "for="+addr) }},
		{"X-Forwarded-For", func(h http.Header, addr string) { h.Add("X-Forwarded-For", addr) }},
		{"CF-Connecting-IP", func(h http.Header, addr string) { h.Set("CF-Connecting-IP", addr) }},
	} {
		t.Run(proxy.header, func(t *testing.T) {
			named, err := extractors.New(extractors.WithTrustedProxies("127.0.0.1"), extractors.WithClientIPHeader(strings.ToLower(proxy.header))) // any case
			require.NoError(t, err)
			byDefault, err := extractors.New(extractors.WithTrustedProxies("127.0.0.1"))
			require.NoError(t, err)
			via := proxyTo(t, backendIP(t, named), proxy.set)
			viaDefault := proxyTo(t, backendIP(t, byDefault), proxy.set)
			for _, spoof := range spoofs {
				assert.Equal(t, client, get(t, clientTransport, via, spoof...), "named %s, client sends %q", proxy.header, spoof)
			}
			assert.Equal(t, client, get(t, clientTransport, via), "no spoof")
			if proxy.header == "X-Real-IP" || proxy.header == "Forwarded" {
				assert.Equal(t, "203.0.113.9", get(t, clientTransport, viaDefault, spoofs[0]...),
					"by default, X-Forwarded-For is read first: the documented hazard WithClientIPHeader removes")
			}
		})
	}

	t.Run("header absent", func(t *testing.T) {
		// A request from the trusted proxy without the named header is the
		// proxy's own, whatever other forwarding headers it carries.
		x, err := extractors.New(extractors.WithTrustedProxies("127.0.0.1"), extractors.WithClientIPHeader("X-Real-IP"))
		require.NoError(t, err)
		assert.Equal(t, "127.0.0.1", get(t, http.DefaultTransport, backendIP(t, x), "X-Forwarded-For", "203.0.113.9", "Forwarded", "for=203.0.113.9"))
	})

	t.Run("gRPC metadata", func(t *testing.T) {
		x, err := extractors.New(extractors.WithTrustedProxies("10.0.0.0/8"), extractors.WithClientIPHeader("X-Real-IP"))
		require.NoError(t, err)
		call := &fakeCall{peer: netip.MustParseAddr("10.0.0.1"), in: map[string][]string{
			"x-forwarded-for": {"203.0.113.9"}, "x-real-ip": {"198.51.100.7"}}}
		assert.Equal(t, []string{"198.51.100.7"}, values(x.GRPCParams(call, t.Context(), "/a.B/C"), "ip"))
	})
}

// TestClientIPHeaderRefused: a name that is no header, or a header named
// without a trusted proxy to send it (it would never be read), is refused.
func TestClientIPHeaderRefused(t *testing.T) {
	for _, name := range []string{"", "X Real IP", "X-Real-IP:", "é"} {
		_, err := extractors.New(extractors.WithTrustedProxies("10.0.0.0/8"), extractors.WithClientIPHeader(name))
		assert.ErrorContains(t, err, "extractors: WithClientIPHeader: ", "%q", name)
	}
	_, err := extractors.New(extractors.WithClientIPHeader("X-Real-IP"))
	assert.ErrorContains(t, err, "WithClientIPHeader")
	assert.ErrorContains(t, err, "WithTrustedProxies")
}

// backendIP serves the ip param of each request as x reads it, and returns
// its URL.
func backendIP(t *testing.T, x *extractors.Extractor) string {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v, _ := x.HTTPParams(r, nil).Param("ip", 0)
		_, _ = io.WriteString(w, v)
	}))
	t.Cleanup(s.Close)
	return s.URL
}

// proxyTo serves a reverse proxy to backend that calls set with the
// address of its client and passes every other header on, and returns its
// URL. It dials the backend from 127.0.0.1.
func proxyTo(t *testing.T, backend string, set func(h http.Header, addr string)) string {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		out, err := http.NewRequestWithContext(r.Context(), r.Method, backend+r.URL.Path, nil)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		out.Header = r.Header.Clone()
		host, _, _ := net.SplitHostPort(r.RemoteAddr)
		set(out.Header, host)
		resp, err := http.DefaultTransport.RoundTrip(out)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		_, _ = io.Copy(w, resp.Body)
	}))
	t.Cleanup(s.Close)
	return s.URL
}

// get sends a GET with the header pairs to url through rt and returns the
// body.
func get(t *testing.T, rt http.RoundTripper, url string, header ...string) string {
	t.Helper()
	r, err := http.NewRequestWithContext(context.Background(), http.MethodGet, url, nil)
	require.NoError(t, err)
	for i := 0; i+1 < len(header); i += 2 {
		r.Header.Add(header[i], header[i+1])
	}
	resp, err := rt.RoundTrip(r)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", body)
	return string(body)
}
