package extractors_test

import (
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/extractors"
)

// FuzzParseParam checks that ParseParam never panics, that what it accepts
// reads back through Param.String, and that it accepts exactly what core
// accepts as a hotspot rule's param; and that reading any param string from
// a request never panics.
func FuzzParseParam(f *testing.F) {
	for _, s := range []string{"header:X-User-ID", "ip", "tenant", "query:", ":x", "form:x", "metadata:k-bin", "path:*", "a b", "\x00"} {
		f.Add(s)
	}
	x, err := extractors.New()
	if err != nil {
		f.Fatal(err)
	}
	kinds := []string{
		extractors.KindHeader, extractors.KindMetadata, extractors.KindQuery, extractors.KindCookie, extractors.KindPath,
		extractors.KindIP, extractors.KindPeer, extractors.KindMethod, extractors.KindHost, extractors.KindCustom,
	}
	r, err := http.NewRequest("GET", "http://example.com/?a=1&b=2", nil)
	if err != nil {
		f.Fatal(err)
	}
	r.RemoteAddr = "192.0.2.1:1"
	r.Header.Set("Cookie", "a=1; b=2")
	r.Header.Set("X-A", "1, 2")
	f.Fuzz(func(t *testing.T, spec string) {
		p, err := extractors.ParseParam(spec)
		_, coreErr := core.NormalizeRules([]core.Rule{{Resource: "*", Kind: core.KindHotspot, Param: spec, Limit: 1}})
		if (err == nil) != (coreErr == nil) {
			t.Fatalf("spec %q: ParseParam error %v, core error %v", spec, err, coreErr)
		}
		if err != nil {
			if p != (extractors.Param{}) {
				t.Fatalf("spec %q: error %v with param %+v", spec, err, p)
			}
		} else {
			if !slices.Contains(kinds, p.Kind) {
				t.Fatalf("spec %q: kind %q", spec, p.Kind)
			}
			if p.String() != spec {
				t.Fatalf("spec %q: String %q", spec, p.String())
			}
		}
		params := x.HTTPParams(r, nil)
		for i := range 3 {
			if v, ok := params.Param(spec, i); ok && (v == "" || len(v) > extractors.DefaultMaxValueLen) {
				t.Fatalf("spec %q: value %d %q", spec, i, v)
			}
		}
	})
}

// FuzzClientIP feeds ClientIP arbitrary peers and forwarding headers. The
// result must be the zero Addr or a valid address without zone or IPv4
// mapping; forwarding headers must count only when the peer is trusted; a
// trusted-proxy answer other than the peer must be a hop the headers name;
// the ip param must be the address's canonical text, or for IPv6 that of
// its /64; and with WithClientIPHeader only the header it names counts.
func FuzzClientIP(f *testing.F) {
	f.Add("10.0.0.1:1", "198.51.100.7, 10.0.0.2", "", "")
	f.Add("10.0.0.1:1", "", `for="[2001:db8::1]:80", for=_x`, "")
	f.Add("10.0.0.1:1", "", "", "198.51.100.9")
	f.Add("203.0.113.1:1", "1.1.1.1", "for=1.1.1.1", "1.1.1.1")
	f.Add("[::ffff:10.0.0.1]:1", "fe80::1%eth0, [2001:db8::2]:7", "", "")
	f.Add("@", "garbage", `for="unterminated`, "x")
	trusted := []string{"10.0.0.0/8", "2001:db8::/32"}
	x, err := extractors.New(extractors.WithTrustedProxies(trusted...), extractors.WithMaxValueLen(1<<10))
	if err != nil {
		f.Fatal(err)
	}
	plain, err := extractors.New()
	if err != nil {
		f.Fatal(err)
	}
	named, err := extractors.New(extractors.WithTrustedProxies(trusted...), extractors.WithClientIPHeader("X-Real-IP"))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, remote, xff, forwarded, realIP string) {
		r := &http.Request{Method: "GET", URL: &url.URL{Path: "/"}, RemoteAddr: remote, Header: http.Header{}}
		for name, v := range map[string]string{"X-Forwarded-For": xff, "Forwarded": forwarded, "X-Real-Ip": realIP} {
			if v != "" {
				r.Header[name] = []string{v}
			}
		}
		got := x.ClientIP(r)
		peer := plain.ClientIP(r)
		fromNamed := named.ClientIP(r)
		only := &http.Request{Method: "GET", URL: r.URL, RemoteAddr: remote, Header: http.Header{}}
		if realIP != "" {
			only.Header["X-Real-Ip"] = []string{realIP}
		}
		if again := named.ClientIP(only); again != fromNamed {
			t.Fatalf("WithClientIPHeader(X-Real-IP): %v with the other headers, %v without", fromNamed, again)
		}
		if peer.IsValid() && (peer.Zone() != "" || peer.Is4In6()) {
			t.Fatalf("peer %v not normalized", peer)
		}
		if !got.IsValid() {
			if peer.IsValid() && !isTrusted(peer, trusted) {
				t.Fatalf("untrusted peer %v, got the zero Addr", peer)
			}
		} else {
			if got.Zone() != "" || got.Is4In6() {
				t.Fatalf("got %v: not normalized", got)
			}
			if got != peer && !isTrusted(peer, trusted) {
				t.Fatalf("untrusted peer %v, got %v from headers", peer, got)
			}
		}
		v, ok := x.HTTPParams(r, nil).Param("ip", 0)
		if ok != got.IsValid() || ok && got.Is4() && v != got.String() {
			t.Fatalf("ip param %q, %v for %v", v, ok, got)
		}
		if ok && got.Is6() {
			if p, err := netip.ParsePrefix(v); err != nil || p.Bits() != 64 || p != p.Masked() || !p.Contains(got) || p.String() != v {
				t.Fatalf("ip param %q for %v: not the canonical text of its /64", v, got)
			}
		}
		if ok && !utf8.ValidString(v) {
			t.Fatalf("ip param %q not UTF-8", v)
		}
		// A trusted proxy appending its element to the client's line
		// decides, whatever the client wrote on its left.
		const client = "198.51.100.77"
		for name, appended := range map[string]string{"X-Forwarded-For": xff + ", " + client, "Forwarded": forwarded + ", for=" + client} {
			r := &http.Request{Method: "GET", URL: r.URL, RemoteAddr: "10.9.9.9:1", Header: http.Header{name: {appended}}}
			if got := x.ClientIP(r); got != netip.MustParseAddr(client) {
				t.Fatalf("%s: %q from a trusted proxy: got %v", name, appended, got)
			}
		}
	})
}

func isTrusted(a netip.Addr, prefixes []string) bool {
	for _, p := range prefixes {
		if netip.MustParsePrefix(p).Contains(a) {
			return true
		}
	}
	return false
}

// FuzzHTTPParams reads header, query and cookie params from arbitrary raw
// values: never a panic, never more values than the cap, never a value
// longer than the cap (but OverflowValue) or empty.
func FuzzHTTPParams(f *testing.F) {
	f.Add("a, b,,c", "q=1&q=%41&q=%zz&q", "k=1; k=\"2\"; k=", "q")
	f.Add(",,,", ";;&&==", "k", "k")
	x, err := extractors.New(extractors.WithMaxValues(4), extractors.WithMaxValueLen(8))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, header, query, cookie, name string) {
		r := &http.Request{Method: "GET", URL: &url.URL{Path: "/", RawQuery: query}, RemoteAddr: "192.0.2.1:1", Header: http.Header{
			"X-K": {header, header}, "Cookie": {cookie},
		}}
		p := x.HTTPParams(r, nil)
		for _, param := range []string{"header:x-k", "query:" + name, "cookie:" + name} {
			for i := 0; ; i++ {
				v, ok := p.Param(param, i)
				if !ok {
					break
				}
				if i >= 4 || v == "" || len(v) > 8 && v != extractors.OverflowValue {
					t.Fatalf("%s[%d] = %q", param, i, v)
				}
			}
		}
	})
}

// FuzzHeaderOneLine checks the shortcut for a header of one line against
// the general scan: a header of the one line s must yield the values of
// the header of the lines s and "" (an empty line adds no value, and two
// lines take the general path), whatever s holds.
func FuzzHeaderOneLine(f *testing.F) {
	for _, s := range []string{"alice", " alice\t", "", " ", "\t \t", "a,b", " , a ,", "héllo wörld", strings.Repeat("é", 10)} {
		f.Add(s)
	}
	x, err := extractors.New(extractors.WithMaxValues(3), extractors.WithMaxValueLen(8))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, s string) {
		one := &http.Request{Header: http.Header{"X-K": {s}}}
		two := &http.Request{Header: http.Header{"X-K": {s, ""}}}
		assert.Equal(t, values(x.HTTPParams(two, nil), "header:x-k"), values(x.HTTPParams(one, nil), "header:x-k"), "%q", s)
	})
}

// FuzzGRPCParams reads the params of a gRPC call from a trusted peer with
// arbitrary forwarding metadata, :authority and metadata values: nothing
// panics, the ip and host params are those of an HTTP request with the
// same headers and Host, and metadata values keep the bounds.
func FuzzGRPCParams(f *testing.F) {
	f.Add("198.51.100.7, 10.0.0.2", "", "", "api.example.com:443", "a, b,,c")
	f.Add("", `for="[2001:db8::1]:80", for=_x`, "", "[::1]:80", "")
	f.Add("garbage", `for="unterminated`, "x", "EXAMPLE.com.", "\x00,\xff")
	x, err := extractors.New(extractors.WithTrustedProxies("10.0.0.0/8"), extractors.WithMaxValues(4), extractors.WithMaxValueLen(8))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, xff, forwarded, realIP, authority, md string) {
		in := map[string][]string{"x-k": {md}, ":authority": {authority}}
		r := &http.Request{Method: "GET", URL: &url.URL{Path: "/"}, Host: authority, RemoteAddr: "10.0.0.1:1", Header: http.Header{"X-K": {md}}}
		for name, v := range map[string]string{"x-forwarded-for": xff, "forwarded": forwarded, "x-real-ip": realIP} {
			if v != "" {
				in[name] = []string{v}
				r.Header[http.CanonicalHeaderKey(name)] = []string{v}
			}
		}
		call := &fakeCall{in: in, peer: netip.MustParseAddr("10.0.0.1")}
		g := x.GRPCParams(call, t.Context(), "/a.B/C")
		h := x.HTTPParams(r, nil)
		for _, param := range []string{"ip", "host"} {
			assert.Equal(t, values(h, param), values(g, param), "%s", param)
		}
		for i, v := range values(g, "metadata:x-k") {
			if i >= 4 || v == "" || len(v) > 8 && v != extractors.OverflowValue {
				t.Fatalf("metadata:x-k[%d] = %q", i, v)
			}
		}
	})
}

// FuzzHTTPResource names arbitrary routes for arbitrary methods: nothing
// panics, a name is "METHOD TEMPLATE" with a standard method or OTHER, and
// the cached name is the first.
func FuzzHTTPResource(f *testing.F) {
	for _, route := range []string{"/items/:id", "GET /items/{id}", "/files/*path", "*", `/a\:b`, "example.com/x/{y...}", "{", "/:", "GET "} {
		f.Add("GET", route)
	}
	f.Add("BREW", "/pot")
	x, err := extractors.New()
	if err != nil {
		f.Fatal(err)
	}
	methods := []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "CONNECT", "OPTIONS", "TRACE", "OTHER"}
	f.Fuzz(func(t *testing.T, method, route string) {
		name := x.HTTPResource(method, route)
		if route == "" {
			assert.Equal(t, extractors.Unmatched, name)
			return
		}
		m, _, ok := strings.Cut(name, " ")
		if !ok || !slices.Contains(methods, m) {
			t.Fatalf("HTTPResource(%q, %q) = %q", method, route, name)
		}
		assert.Equal(t, name, x.HTTPResource(method, route), "cached")
	})
}
