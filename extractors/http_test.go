package extractors_test

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/extractors"
)

// newRequest returns a server request from remote with header lines given
// as name, value pairs (a name given twice makes two lines).
func newRequest(t testing.TB, method, target, remote string, header ...string) *http.Request {
	t.Helper()
	r := httptest.NewRequest(method, target, nil)
	r.RemoteAddr = remote
	require.Zero(t, len(header)%2, "header pairs")
	for i := 0; i < len(header); i += 2 {
		r.Header.Add(header[i], header[i+1])
	}
	return r
}

// values returns every value Param yields for param, asking i = 0, 1, ...
// as Enter does.
func values(p core.Params, param string) []string {
	var vs []string
	for i := 0; ; i++ {
		v, ok := p.Param(param, i)
		if !ok {
			return vs
		}
		vs = append(vs, v)
	}
}

// pathMap is a PathParams as the gin and echo adapters give.
type pathMap map[string]string

func (m pathMap) PathParam(name string) (string, bool) {
	v, ok := m[name]
	return v, ok
}

func TestHTTPParamKinds(t *testing.T) {
	x, err := extractors.New(
		extractors.WithTrustedProxies("10.0.0.0/8"),
		extractors.WithHTTPParam("tenant", func(r *http.Request) []string {
			return strings.Split(r.Header.Get("X-Tenants"), "|")
		}),
		extractors.WithHTTPParam("nothing", func(*http.Request) []string { return nil }),
	)
	require.NoError(t, err)

	for _, tc := range []struct {
		name   string
		req    *http.Request
		path   extractors.PathParams
		param  string
		values []string
	}{
		// header (and metadata, its synonym on HTTP)
		{"header", newRequest(t, "GET", "/", "1.2.3.4:5", "X-User-ID", "alice"), nil, "header:X-User-ID", []string{"alice"}},
		{"header any case", newRequest(t, "GET", "/", "1.2.3.4:5", "x-user-id", "alice"), nil, "header:X-USER-id", []string{"alice"}},
		{"header absent", newRequest(t, "GET", "/", "1.2.3.4:5"), nil, "header:X-User-ID", nil},
		{"header empty", newRequest(t, "GET", "/", "1.2.3.4:5", "X-User-ID", ""), nil, "header:X-User-ID", nil},
		{"header repeated", newRequest(t, "GET", "/", "1.2.3.4:5", "X-User-ID", "a", "X-User-ID", "b"), nil, "header:X-User-ID", []string{"a", "b"}},
		{"header commas", newRequest(t, "GET", "/", "1.2.3.4:5", "X-User-ID", " a ,b,, \tc\t", "X-User-ID", "d"), nil, "header:X-User-ID", []string{"a", "b", "c", "d"}},
		{"header only commas", newRequest(t, "GET", "/", "1.2.3.4:5", "X-User-ID", " , ,"), nil, "header:X-User-ID", nil},
		{"metadata on http", newRequest(t, "GET", "/", "1.2.3.4:5", "X-Api-Key", "k1"), nil, "metadata:x-api-key", []string{"k1"}},

		// query
		{"query", newRequest(t, "GET", "/?tenant=acme&x=1", "1.2.3.4:5"), nil, "query:tenant", []string{"acme"}},
		{"query repeated", newRequest(t, "GET", "/?tenant=a&tenant=b&other=c&tenant=d", "1.2.3.4:5"), nil, "query:tenant", []string{"a", "b", "d"}},
		{"query comma kept", newRequest(t, "GET", "/?tenant=a,b", "1.2.3.4:5"), nil, "query:tenant", []string{"a,b"}},
		{"query decoded", newRequest(t, "GET", "/?ten%61nt=a%20b+c", "1.2.3.4:5"), nil, "query:tenant", []string{"a b c"}},
		{"query key escaped", newRequest(t, "GET", "/?a%2Bb=v&a+b=w", "1.2.3.4:5"), nil, "query:a+b", []string{"v"}},
		{"query case sensitive", newRequest(t, "GET", "/?Tenant=a", "1.2.3.4:5"), nil, "query:tenant", nil},
		{"query empty", newRequest(t, "GET", "/?tenant=&tenant", "1.2.3.4:5"), nil, "query:tenant", nil},
		{"query bad escape skipped", newRequest(t, "GET", "/?tenant=%zz&tenant=ok", "1.2.3.4:5"), nil, "query:tenant", []string{"ok"}},
		{"query semicolon skipped", newRequest(t, "GET", "/?tenant=a;b&tenant=c", "1.2.3.4:5"), nil, "query:tenant", []string{"c"}},
		{"query prefix key", newRequest(t, "GET", "/?tenantx=a&tenan=b", "1.2.3.4:5"), nil, "query:tenant", nil},

		// cookie
		{"cookie", newRequest(t, "GET", "/", "1.2.3.4:5", "Cookie", "a=1; sid=abc; b=2"), nil, "cookie:sid", []string{"abc"}},
		{"cookie quoted", newRequest(t, "GET", "/", "1.2.3.4:5", "Cookie", `sid="abc"`), nil, "cookie:sid", []string{"abc"}},
		{"cookie repeated", newRequest(t, "GET", "/", "1.2.3.4:5", "Cookie", "sid=a; sid=b", "Cookie", "sid=c"), nil, "cookie:sid", []string{"a", "b", "c"}},
		{"cookie case sensitive", newRequest(t, "GET", "/", "1.2.3.4:5", "Cookie", "SID=a"), nil, "cookie:sid", nil},
		{"cookie empty", newRequest(t, "GET", "/", "1.2.3.4:5", "Cookie", "sid=; sid"), nil, "cookie:sid", nil},

		// path
		{"path from PathParams", newRequest(t, "GET", "/items/7", "1.2.3.4:5"), pathMap{"id": "7"}, "path:id", []string{"7"}},
		{"path missing", newRequest(t, "GET", "/items/7", "1.2.3.4:5"), pathMap{"id": "7"}, "path:other", nil},
		{"path nil is PathValue", pathValueRequest(t, "id", "42"), nil, "path:id", []string{"42"}},
		{"path empty PathValue", newRequest(t, "GET", "/items/7", "1.2.3.4:5"), nil, "path:id", nil},

		// ip and peer
		{"ip peer", newRequest(t, "GET", "/", "1.2.3.4:5", "X-Forwarded-For", "9.9.9.9"), nil, "ip", []string{"1.2.3.4"}},
		{"ip via trusted proxy", newRequest(t, "GET", "/", "10.0.0.1:5", "X-Forwarded-For", "9.9.9.9"), nil, "ip", []string{"9.9.9.9"}},
		{"ip v6 peer", newRequest(t, "GET", "/", "[2001:DB8::1]:5"), nil, "ip", []string{"2001:db8::/64"}},
		{"peer v6", newRequest(t, "GET", "/", "[2001:DB8::1]:5"), nil, "peer", []string{"2001:db8::1"}},
		{"ip unix socket", newRequest(t, "GET", "/", "@"), nil, "ip", nil},
		{"peer ignores forwarding", newRequest(t, "GET", "/", "10.0.0.1:5", "X-Forwarded-For", "9.9.9.9"), nil, "peer", []string{"10.0.0.1"}},
		{"peer mapped", newRequest(t, "GET", "/", "[::ffff:1.2.3.4]:5"), nil, "peer", []string{"1.2.3.4"}},

		// method
		{"method", newRequest(t, "DELETE", "/", "1.2.3.4:5"), nil, "method", []string{"DELETE"}},
		{"method other", newRequest(t, "BREW", "/", "1.2.3.4:5"), nil, "method", []string{"OTHER"}},

		// host
		{"host", newRequest(t, "GET", "http://Example.COM:8080/", "1.2.3.4:5"), nil, "host", []string{"example.com"}},
		{"host trailing dot", newRequest(t, "GET", "http://example.com./", "1.2.3.4:5"), nil, "host", []string{"example.com"}},
		{"host v6", newRequest(t, "GET", "http://[2001:db8::1]:80/", "1.2.3.4:5"), nil, "host", []string{"2001:db8::1"}},

		// custom
		{"custom", newRequest(t, "GET", "/", "1.2.3.4:5", "X-Tenants", "a|b||c"), nil, "tenant", []string{"a", "b", "c"}},
		{"custom nil", newRequest(t, "GET", "/", "1.2.3.4:5"), nil, "nothing", nil},
		{"custom unregistered", newRequest(t, "GET", "/", "1.2.3.4:5"), nil, "unknown", nil},

		// malformed specs read as absent
		{"bad spec", newRequest(t, "GET", "/", "1.2.3.4:5", "X-User-ID", "a"), nil, "header:", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := x.HTTPParams(tc.req, tc.path)
			assert.Equal(t, tc.values, values(p, tc.param))
			assert.Equal(t, tc.values, values(p, tc.param), "reading again gives the same values")
			_, ok := p.Param(tc.param, -1)
			assert.False(t, ok, "negative index")
			if len(tc.values) > 0 {
				v, ok := p.Param(tc.param, 0)
				assert.True(t, ok)
				assert.Equal(t, tc.values[0], v, "index 0 after the end")
			}
		})
	}
}

// pathValueRequest returns a request with path value name set as ServeMux
// sets it.
func pathValueRequest(t *testing.T, name, value string) *http.Request {
	r := newRequest(t, "GET", "/items/"+value, "1.2.3.4:5")
	r.SetPathValue(name, value)
	return r
}

// TestHTTPParamsInterleaved reads values of several params in turns, as Enter
// does for several hotspot rules, and checks each param's values stay right.
func TestHTTPParamsInterleaved(t *testing.T) {
	var calls int
	x, err := extractors.New(extractors.WithHTTPParam("tenant", func(*http.Request) []string {
		calls++
		return []string{"t1", "t2"}
	}))
	require.NoError(t, err)
	r := newRequest(t, "GET", "/?q=1&q=2", "1.2.3.4:5", "A", "a0, a1", "B", "b0", "B", "b1")
	p := x.HTTPParams(r, nil)
	for _, step := range []struct {
		param string
		i     int
		want  string
		ok    bool
	}{
		{"header:a", 0, "a0", true},
		{"header:b", 0, "b0", true},
		{"header:a", 1, "a1", true},
		{"tenant", 0, "t1", true},
		{"query:q", 1, "2", true},
		{"tenant", 1, "t2", true},
		{"header:b", 1, "b1", true},
		{"header:b", 2, "", false},
		{"query:q", 0, "1", true},
		{"tenant", 2, "", false},
		{"header:a", 5, "", false},
	} {
		v, ok := p.Param(step.param, step.i)
		assert.Equal(t, step.ok, ok, "%s[%d]", step.param, step.i)
		assert.Equal(t, step.want, v, "%s[%d]", step.param, step.i)
	}
	assert.Equal(t, 1, calls, "the custom extractor runs once while no other custom param is read")

	// Read rule by rule, as Enter does, each custom extractor runs once.
	calls = 0
	p = x.HTTPParams(r, nil)
	assert.Equal(t, []string{"a0", "a1"}, values(p, "header:a"))
	assert.Equal(t, []string{"t1", "t2"}, values(p, "tenant"))
	assert.Equal(t, []string{"1", "2"}, values(p, "query:q"))
	assert.Equal(t, []string{"t1", "t2"}, values(p, "tenant"))
	assert.Equal(t, 1, calls)
}

func TestHTTPParamCaps(t *testing.T) {
	x, err := extractors.New(extractors.WithMaxValueLen(4), extractors.WithMaxValues(3),
		extractors.WithHTTPParam("many", func(*http.Request) []string { return []string{"1", "2", "3", "4", "5"} }))
	require.NoError(t, err)

	for _, tc := range []struct {
		name   string
		req    *http.Request
		param  string
		values []string
	}{
		{"long value truncated", newRequest(t, "GET", "/", "1.2.3.4:5", "X-K", "abcdefgh"), "header:X-K", []string{"abcd"}},
		{"truncation keeps UTF-8", newRequest(t, "GET", "/", "1.2.3.4:5", "X-K", "abc\u00e9"), "header:X-K", []string{"abc"}},
		{"at the count cap", newRequest(t, "GET", "/", "1.2.3.4:5", "X-K", "a,b,c"), "header:X-K", []string{"a", "b", "c"}},
		{"beyond the count cap folded", newRequest(t, "GET", "/", "1.2.3.4:5", "X-K", "a,b", "X-K", "c,d"), "header:X-K", []string{"a", "b", extractors.OverflowValue}},
		{"empty elements do not count", newRequest(t, "GET", "/", "1.2.3.4:5", "X-K", "a,,,,b,,,c,,,"), "header:X-K", []string{"a", "b", "c"}},
		{"query folded", newRequest(t, "GET", "/?q=1&q=2&q=3&q=4", "1.2.3.4:5"), "query:q", []string{"1", "2", extractors.OverflowValue}},
		{"query decoded then truncated", newRequest(t, "GET", "/?q=%41%42%43%44%45", "1.2.3.4:5"), "query:q", []string{"ABCD"}},
		{"cookie folded", newRequest(t, "GET", "/", "1.2.3.4:5", "Cookie", "s=1; s=2; s=3; s=4"), "cookie:s", []string{"1", "2", extractors.OverflowValue}},
		{"custom folded", newRequest(t, "GET", "/", "1.2.3.4:5"), "many", []string{"1", "2", extractors.OverflowValue}},
		{"host truncated", newRequest(t, "GET", "http://example.com/", "1.2.3.4:5"), "host", []string{"exam"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.values, values(x.HTTPParams(tc.req, nil), tc.param))
		})
	}

	// A client rotating values past the count cap still lands on the one
	// shared value: two requests differing only beyond the cap read alike.
	r1 := newRequest(t, "GET", "/", "1.2.3.4:5", "X-K", "a,b,rand1,rand2")
	r2 := newRequest(t, "GET", "/", "1.2.3.4:5", "X-K", "a,b,rand3", "X-K", "rand4,rand5")
	assert.Equal(t, values(x.HTTPParams(r1, nil), "header:X-K"), values(x.HTTPParams(r2, nil), "header:X-K"))

	one, err := extractors.New(extractors.WithMaxValues(1))
	require.NoError(t, err)
	r := newRequest(t, "GET", "/", "1.2.3.4:5", "X-K", "a")
	assert.Equal(t, []string{"a"}, values(one.HTTPParams(r, nil), "header:X-K"))
	r = newRequest(t, "GET", "/", "1.2.3.4:5", "X-K", "a, b")
	assert.Equal(t, []string{extractors.OverflowValue}, values(one.HTTPParams(r, nil), "header:X-K"))
}

// TestHTTPParamsLimitEveryValue drives a Guard with a hotspot rule through
// HTTPParams and checks that folding and truncation keep clients limited:
// neither padding a value nor piling up values escapes the per-value limit.
func TestHTTPParamsLimitEveryValue(t *testing.T) {
	guard, err := core.New(core.WithRules(core.Rule{
		Resource: "*", Kind: core.KindHotspot, Param: "header:X-User-ID", Limit: 2, Window: 3600e9,
	}))
	require.NoError(t, err)
	x, err := extractors.New(extractors.WithMaxValueLen(8), extractors.WithMaxValues(2))
	require.NoError(t, err)

	pass := func(value ...string) bool {
		r := newRequest(t, "GET", "/", "1.2.3.4:5")
		for _, v := range value {
			r.Header.Add("X-User-ID", v)
		}
		e, err := guard.Enter(t.Context(), "GET /", core.WithParams(x.HTTPParams(r, nil)))
		if err != nil {
			require.ErrorIs(t, err, core.ErrBlocked)
			return false
		}
		e.Exit(nil)
		return true
	}
	// Padding: "alice" + anything past 8 bytes is one value.
	assert.True(t, pass("alice-12-pad1"))
	assert.True(t, pass("alice-12-pad2"))
	assert.False(t, pass("alice-12-pad3"), "a value padded past the cap is still limited")
	// Piling: past 2 values every request shares OverflowValue.
	assert.True(t, pass("a1", "x1", "y1"))
	assert.True(t, pass("a2", "x2", "y2"))
	assert.False(t, pass("a3", "x3", "y3"), "values past the count cap share one limit")
	// And every value counts: a blocked first value blocks the request.
	assert.False(t, pass("alice-12", "fresh"), "an exhausted value among fresh ones is limited")
}

func TestNormalizeRoute(t *testing.T) {
	for _, tc := range []struct{ route, want string }{
		// net/http ServeMux patterns
		{"/items/{id}", "/items/{id}"},
		{"GET /items/{id}", "/items/{id}"},
		{"GET  \t/items/{id}", "/items/{id}"},
		{"example.com/items/{id}", "/items/{id}"},
		{"POST example.com/items/{id}", "/items/{id}"},
		{"/files/{path...}", "/files/{path...}"},
		{"GET /{$}", "/{$}"},
		{"/items/", "/items/"},
		{"GET /v1/items:batchGet", "/v1/items:batchGet"},
		{"/v1/{name}:cancel", "/v1/{name}:cancel"},
		{"/", "/"},
		// gin and echo routes
		{"/items/:id", "/items/{id}"},
		{"/users/:uid/items/:id", "/users/{uid}/items/{id}"},
		{"/files/*path", "/files/{path...}"},
		{"/static/*", "/static/{*...}"},
		{"/a/:x/", "/a/{x}/"},
		{"/a/prefix-:x", "/a/prefix-{x}"},
		{`/a/\:literal`, "/a/:literal"},
		{"/plain/path", "/plain/path"},
	} {
		assert.Equal(t, tc.want, extractors.NormalizeRoute(tc.route), tc.route)
	}
}

func TestHTTPResource(t *testing.T) {
	x, err := extractors.New()
	require.NoError(t, err)
	for _, tc := range []struct{ method, route, want string }{
		{"GET", "/items/:id", "GET /items/{id}"},
		{"GET", "GET /items/{id}", "GET /items/{id}"},
		{"HEAD", "GET /items/{id}", "HEAD /items/{id}"},
		{"POST", "/files/*path", "POST /files/{path...}"},
		{"GET", "example.com/x/{a}", "GET /x/{a}"},
		{"BREW", "/items/:id", "OTHER /items/{id}"},
		{"get", "/items/:id", "OTHER /items/{id}"},
		{"GET", "", extractors.Unmatched},
		{"BREW", "", extractors.Unmatched},
	} {
		assert.Equal(t, tc.want, x.HTTPResource(tc.method, tc.route), "%s %s", tc.method, tc.route)
		assert.Equal(t, tc.want, x.HTTPResource(tc.method, tc.route), "cached: %s %s", tc.method, tc.route)
	}
	// gin, echo and net/http spellings of a route give one resource.
	assert.Equal(t, x.HTTPResource("GET", "/a/:b/*c"), x.HTTPResource("GET", "GET /a/{b}/{c...}"))
	// Every standard method names its own resource of a route, cached or not.
	for _, m := range []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "CONNECT", "OPTIONS", "TRACE", "OTHER"} {
		assert.Equal(t, m+" /m/{id}", x.HTTPResource(m, "/m/:id"), m)
		assert.Equal(t, m+" /m/{id}", x.HTTPResource(m, "/m/:id"), "cached: "+m)
	}

	if !raceEnabled {
		allocs := testing.AllocsPerRun(100, func() { _ = x.HTTPResource("GET", "/items/:id") })
		assert.Zero(t, allocs, "cached resource names do not allocate")
		allocs = testing.AllocsPerRun(100, func() { _ = x.HTTPResource("GET", "") })
		assert.Zero(t, allocs)
	}
}

// TestHTTPResourceCacheBounded mints many routes and methods and checks the
// names stay right past the cache bound.
func TestHTTPResourceCacheBounded(t *testing.T) {
	x, err := extractors.New()
	require.NoError(t, err)
	for i := range 10000 {
		route := "/r" + strings.Repeat("x", i%7) + "/:id" + itoa(i)
		assert.Equal(t, "PUT "+extractors.NormalizeRoute(route), x.HTTPResource("PUT", route))
	}
}

func itoa(i int) string {
	var b [20]byte
	n := len(b)
	for {
		n--
		b[n] = byte('0' + i%10)
		if i /= 10; i == 0 {
			return string(b[n:])
		}
	}
}

// TestHTTPParamsOverServeMux serves real requests through a ServeMux on a
// loopback listener and reads the resource and params in the handler, as the
// net/http adapter does: r.Pattern, r.PathValue, RemoteAddr, headers sent by
// a real client.
func TestHTTPParamsOverServeMux(t *testing.T) {
	x, err := extractors.New(extractors.WithTrustedProxies("127.0.0.0/8", "::1"))
	require.NoError(t, err)

	type seen struct {
		resource, id, user, ip, peer, host, q string
	}
	got := make(chan seen, 1)
	mux := http.NewServeMux()
	handler := func(w http.ResponseWriter, r *http.Request) {
		p := x.HTTPParams(r, nil)
		var s seen
		s.resource = x.HTTPResource(r.Method, r.Pattern)
		s.id, _ = p.Param("path:id", 0)
		s.user, _ = p.Param("header:x-user-id", 0)
		s.ip, _ = p.Param("ip", 0)
		s.peer, _ = p.Param("peer", 0)
		s.host, _ = p.Param("host", 0)
		s.q, _ = p.Param("query:q", 0)
		got <- s
	}
	mux.HandleFunc("GET /items/{id}", handler)
	mux.HandleFunc("/", handler)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := &http.Server{Handler: mux}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })

	get := func(path string, header ...string) seen {
		req, err := http.NewRequestWithContext(t.Context(), "GET", "http://"+ln.Addr().String()+path, nil)
		require.NoError(t, err)
		for i := 0; i < len(header); i += 2 {
			req.Header.Add(header[i], header[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		require.NoError(t, resp.Body.Close())
		return <-got
	}

	s := get("/items/42?q=x%2Fy", "X-User-ID", "alice", "X-Forwarded-For", "203.0.113.7, 127.0.0.5")
	assert.Equal(t, seen{
		resource: "GET /items/{id}", id: "42", user: "alice", ip: "203.0.113.7", peer: "127.0.0.1", host: "127.0.0.1", q: "x/y",
	}, s)

	s = get("/nowhere/at/all")
	assert.Equal(t, "GET /", s.resource, "the catch-all pattern is the route")
	assert.Equal(t, "127.0.0.1", s.ip, "no forwarding header: the trusted peer itself")
}

// TestHTTPParamsHostileSources reads params from sources built to cost:
// megabytes of separators and values. The values stay capped and right.
func TestHTTPParamsHostileSources(t *testing.T) {
	x, err := extractors.New()
	require.NoError(t, err)
	commas := strings.Repeat(",", 1<<20)
	many := strings.Repeat("v,", 100000)
	r := newRequest(t, "GET", "/?"+strings.Repeat("x=1&", 50000)+"q=a", "1.2.3.4:5",
		"X-Sparse", commas+"a"+commas,
		"X-Many", many,
		"Cookie", strings.Repeat(";", 1<<20)+"s=1")
	p := x.HTTPParams(r, nil)
	assert.Equal(t, []string{"a"}, values(p, "header:X-Sparse"))
	vs := values(p, "header:X-Many")
	require.Len(t, vs, extractors.DefaultMaxValues)
	assert.Equal(t, extractors.OverflowValue, vs[len(vs)-1])
	assert.Equal(t, []string{"a"}, values(p, "query:q"))
	assert.Equal(t, []string{"1"}, values(p, "cookie:s"))
}

// TestHTTPParamsManyParamStrings reads more distinct param strings than the
// caches hold; every read stays right.
func TestHTTPParamsManyParamStrings(t *testing.T) {
	x, err := extractors.New()
	require.NoError(t, err)
	r := newRequest(t, "GET", "/", "1.2.3.4:5")
	for i := range 3000 {
		r.Header.Set("X-H"+itoa(i), "v"+itoa(i))
	}
	for round := range 2 {
		for i := range 3000 {
			p := x.HTTPParams(r, nil)
			assert.Equal(t, []string{"v" + itoa(i)}, values(p, "header:x-h"+itoa(i)), "round %d", round)
		}
	}
}
