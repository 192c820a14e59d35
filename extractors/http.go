package extractors

import (
	"context"
	"net/http"
	"net/netip"
	"strings"
)

// Params is the core.Params of one HTTP request or gRPC call, for
// core.WithParams: every param kind of the package documentation, read
// lazily (only the params that a matching hotspot rule names are read, and
// only when Enter asks). ResetHTTP readies it for an HTTP request,
// ResetGRPC for a gRPC call:
//
//	var p extractors.Params
//	p.ResetHTTP(x, r, nil)
//	e, err := guard.Enter(r.Context(), resource, core.WithParams(&p))
//
// An adapter embeds it in an object it allocates (or reuses) per request:
// reading header, metadata, query, cookie, path (ServeMux), method, host,
// peer and ip params of an HTTP request then allocates nothing; the
// exceptions are values that must be rewritten: a percent-encoded query
// value, an IP address not written in canonical form (IPv4-mapped,
// upper-case hex, with a zone), the ip of an IPv6 client whose prefix's
// text is not among the 4096 cached, a host with capitals. Custom params
// allocate a holder for their values, plus what their function allocates.
// For gRPC calls, see ResetGRPC.
//
// It holds the position of the last value read (so that Enter reading values
// 0, 1, 2... of a param scans its source once) and must be used by one
// goroutine. Enter reads its Params only while it runs, so once Enter has
// returned a Params may be reset for another request, or put back in a
// pool: reset it with nils first so that it does not keep the request
// alive. The zero Params, and one reset with a nil Extractor, has no
// values.
type Params struct {
	// Kept small (64 bytes): HTTP adapters allocate it per request, and
	// allocation time grows with size. What a gRPC call needs is held
	// apart: the gRPC adapter reuses its Params.
	x    *Extractor
	r    *http.Request // nil for a gRPC call
	path PathParams
	cur  cursor
	held *held // allocated by the first custom param read or gRPC call, kept across resets
}

// held is what a Params holds apart: an HTTP request's custom param values,
// or a gRPC call.
type held struct {
	// sp is the param whose values vs holds (HTTP custom params; gRPC:
	// the source of the cursor's param).
	sp *spec
	vs []string

	// A gRPC call's.
	call   GRPCCall
	ctx    context.Context
	method string
	ipDone bool
	ip     string // the client IP's text; "" when there is none
}

// ResetHTTP readies p to give the params of the HTTP request r, read with
// x, forgetting the request or call it read before; path gives the route
// parameters for path:NAME (nil: r.PathValue, net/http's ServeMux).
// ResetHTTP(nil, nil, nil) drops every reference p holds. It keeps the
// holder of custom param values (emptied), so that reusing p does not
// allocate again.
func (p *Params) ResetHTTP(x *Extractor, r *http.Request, path PathParams) {
	// Field by field: a composite literal would build a copy first.
	p.x, p.r, p.path = x, r, path
	p.cur = cursor{}
	if h := p.held; h != nil {
		*h = held{}
	}
}

// values returns the values fn gives for sp, calling fn unless they are
// held already: a custom extractor is called once while Enter reads that
// param's values.
func (c *held) values(sp *spec, fn func() []string) []string {
	if c.sp != sp {
		c.sp, c.vs = sp, fn()
	}
	return c.vs
}

// Param returns the i-th value of param for the request or call
// (core.Params).
func (p *Params) Param(param string, i int) (string, bool) {
	x := p.x
	if p.r == nil {
		return p.grpcParam(param, i)
	}
	if x == nil {
		return "", false
	}
	sp := x.lookup(&p.cur, param)
	if p.cur.sp == sp && p.cur.end && i >= int(p.cur.next) {
		return "", false // past the last value, known without a look
	}
	if p.cur.sp != sp {
		p.cur.start(sp)
	}
	switch sp.code {
	case codeHeader:
		return x.value(&p.cur, p.r.Header[sp.header], modeList, i)
	case codeQuery:
		if p.r.URL == nil {
			return "", false
		}
		return x.value(&p.cur, []string{p.r.URL.RawQuery}, modeQuery, i)
	case codeCookie:
		return x.value(&p.cur, p.r.Header["Cookie"], modeCookie, i)
	case codeCustom:
		fn := x.httpCustom[sp.name]
		if fn == nil {
			key := x.ctxParams[sp.name]
			if key == nil {
				return "", false
			}
			fn = func(r *http.Request) []string { return contextStrings(p.contextValue(key)) }
		}
		if p.held == nil {
			p.held = &held{}
		}
		vs := p.held.values(sp, func() []string { return fn(p.r) })
		return x.value(&p.cur, vs, modePlain, i)
	}
	if i != 0 {
		return "", false
	}
	var v string
	switch sp.code {
	case codePath:
		if p.path != nil {
			v, _ = p.path.PathParam(sp.name)
		} else {
			v = p.r.PathValue(sp.name)
		}
	case codeIP:
		a, text := netip.Addr{}, ""
		if fw, ok := p.path.(clientIPs); ok {
			a, text = parseHop(fw.ClientIP())
		} else {
			a, text = x.httpClientIP(p.r)
		}
		if a.IsValid() {
			v = x.ipValue(a, text)
		}
	case codePeer:
		if a, text := parseHop(p.r.RemoteAddr); a.IsValid() {
			v = addrText(a, text)
		}
	case codeMethod:
		v = standardMethod(p.r.Method)
	case codeHost:
		v = NormalizeHost(p.r.Host)
	}
	if v == "" {
		return "", false
	}
	return truncate(v, x.maxValueLen), true
}

// contextValue returns the value stored under key for the request: its
// framework's, else its context's.
func (p *Params) contextValue(key any) any {
	if fw, ok := p.path.(contextValues); ok {
		if v, ok := fw.ContextValue(key); ok {
			return v
		}
	}
	return p.r.Context().Value(key)
}

// standardMethod returns m when it is a standard HTTP method, else "OTHER".
func standardMethod(m string) string { return methodName(methodIndex(m)) }

// NormalizeHost returns host, a Host field or a URL's host with or without
// a port, as the host param reads it: without port, brackets and trailing
// dot, in lower case, the forms a host name may vary by. It does not
// convert an internationalized name: "bücher.example" and its ASCII form
// "xn--bcher-kva.example", which clients send, are two hosts (the
// conversion, golang.org/x/net/idna, would add a dependency to every
// module of sluice).
func NormalizeHost(host string) string {
	if strings.HasPrefix(host, "[") {
		if end := strings.IndexByte(host, ']'); end > 0 {
			host = host[1:end]
		}
	} else if i := strings.IndexByte(host, ':'); i >= 0 && strings.LastIndexByte(host, ':') == i {
		host = host[:i]
	}
	host = strings.TrimSuffix(host, ".")
	for i := 0; i < len(host); i++ {
		if c := host[i]; 'A' <= c && c <= 'Z' {
			return strings.ToLower(host)
		}
	}
	return host
}

// HTTPResource returns the resource name of a request with method that
// matched route, as "METHOD TEMPLATE": HTTPResource("GET", "/items/:id")
// and HTTPResource("GET", "GET /items/{id}") are both "GET /items/{id}".
// route is the template as the framework reports it (gin's FullPath, echo's
// Path, net/http's r.Pattern); "" (no route matched) gives Unmatched.
// TEMPLATE is route written as net/http's ServeMux writes patterns:
//
//   - a ServeMux pattern ("GET /items/{id}", "example.com/items/{id}",
//     "/items/{id}") loses its method and host and is otherwise kept
//     ("{name...}" and "{$}" included);
//   - a gin or echo route ("/items/:id", "/files/*path") has its ':name'
//     parameters written "{name}" and its '*name' catch-alls "{name...}"
//     (echo's unnamed "*" becomes "{*...}"; echo's escaped "\:" is a literal
//     colon).
//
// A route is a ServeMux pattern when it does not start with '/' (it has a
// method or host) or when it holds '{'; else ':' and '*' are parameters. So
// a ServeMux pattern with neither method nor braces but with a literal ':'
// or '*' ("/v1/items:batch") reads as a gin/echo route: register such
// patterns with their method.
//
// Methods outside the standard set (GET, HEAD, POST, PUT, PATCH, DELETE,
// CONNECT, OPTIONS, TRACE) become "OTHER", so clients cannot mint names.
// Results are cached: after the first call for a route it does not
// allocate.
func (x *Extractor) HTTPResource(method, route string) string {
	if route == "" {
		return Unmatched
	}
	m := methodIndex(method)
	if names, ok := x.routes.load(route); ok {
		return names[m]
	}
	return x.routes.store(route, newRouteNames(route))[m]
}

// numMethods is the number of method indexes: the standard methods and
// "OTHER".
const numMethods = 10

// newRouteNames returns the resource names of route for every method (by
// methodIndex), made at once and in one string, so that the cache holds
// them under the route alone and a request costs one lookup of one string.
func newRouteNames(route string) *[numMethods]string {
	tmpl := normalizeRoute(route)
	var b strings.Builder
	b.Grow(numMethods*(len(tmpl)+1) + 60)
	var ends [numMethods]int
	for i := range numMethods {
		b.WriteString(methodName(i))
		b.WriteByte(' ')
		b.WriteString(tmpl)
		ends[i] = b.Len()
	}
	all := b.String()
	var names [numMethods]string
	start := 0
	for i, end := range ends {
		names[i], start = all[start:end], end
	}
	return &names
}

// methodIndex returns the index of the standard method m, or that of
// "OTHER" when m is none.
func methodIndex(m string) int {
	switch m {
	case http.MethodGet:
		return 0
	case http.MethodHead:
		return 1
	case http.MethodPost:
		return 2
	case http.MethodPut:
		return 3
	case http.MethodPatch:
		return 4
	case http.MethodDelete:
		return 5
	case http.MethodConnect:
		return 6
	case http.MethodOptions:
		return 7
	case http.MethodTrace:
		return 8
	}
	return numMethods - 1
}

// methodName returns the method of index i: standardMethod's result.
func methodName(i int) string {
	switch i {
	case 0:
		return http.MethodGet
	case 1:
		return http.MethodHead
	case 2:
		return http.MethodPost
	case 3:
		return http.MethodPut
	case 4:
		return http.MethodPatch
	case 5:
		return http.MethodDelete
	case 6:
		return http.MethodConnect
	case 7:
		return http.MethodOptions
	case 8:
		return http.MethodTrace
	}
	return "OTHER"
}

// normalizeRoute returns the TEMPLATE of route (see HTTPResource).
func normalizeRoute(route string) string {
	if !strings.HasPrefix(route, "/") {
		if i := strings.IndexAny(route, " \t"); i >= 0 {
			route = strings.TrimLeft(route[i+1:], " \t")
		}
		if i := strings.IndexByte(route, '/'); i > 0 {
			route = route[i:]
		}
		return route
	}
	if strings.IndexByte(route, '{') >= 0 || !strings.ContainsAny(route, ":*") {
		return route
	}
	var b strings.Builder
	b.Grow(len(route) + 8)
	for i := 0; i < len(route); i++ {
		switch c := route[i]; c {
		case '\\':
			if i+1 < len(route) && route[i+1] == ':' {
				b.WriteByte(':')
				i++
				continue
			}
			b.WriteByte(c)
		case ':', '*':
			end := strings.IndexByte(route[i:], '/')
			if end < 0 {
				end = len(route) - i
			}
			name := route[i+1 : i+end]
			if c == '*' && name == "" {
				name = "*"
			}
			b.WriteByte('{')
			b.WriteString(name)
			if c == '*' {
				b.WriteString("...")
			}
			b.WriteByte('}')
			i += end - 1
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
