package extractors_test

import (
	"testing"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/extractors"
)

// BenchmarkHTTPParamsHeader is the per-request cost of a hotspot rule on a
// header: HTTPParams and the header's value read through Param ("read"),
// and then also the look for a second value that ends Enter's loop
// ("enter", what Enter does for a single-valued header).
func BenchmarkHTTPParamsHeader(b *testing.B) {
	x, err := extractors.New()
	if err != nil {
		b.Fatal(err)
	}
	r := newRequest(b, "GET", "/items/1?tenant=acme", "203.0.113.1:4000", "X-User-ID", "alice", "Accept", "*/*")
	b.Run("read", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if v, ok := first(x.HTTPParams(r, nil), "header:X-User-ID"); !ok || v != "alice" {
				b.Fatal(v, ok)
			}
		}
	})
	b.Run("enter", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if n := count(x.HTTPParams(r, nil), "header:X-User-ID"); n != 1 {
				b.Fatal(n)
			}
		}
	})
	// reused is "enter" with a Params reset (ResetHTTP) per request, as the
	// adapters hold it: the reading without the allocation.
	b.Run("reused", func(b *testing.B) {
		var p extractors.Params
		b.ReportAllocs()
		for b.Loop() {
			p.ResetHTTP(x, r, nil)
			if n := count(&p, "header:X-User-ID"); n != 1 {
				b.Fatal(n)
			}
		}
	})
}

// first returns the first value of param, through the interface as Enter
// reads it (so that, as in Enter, the params value is not optimized away).
//
//go:noinline
func first(p core.Params, param string) (string, bool) {
	return p.Param(param, 0)
}

// count reads every value of param as Enter does and returns their number.
//
//go:noinline
func count(p core.Params, param string) int {
	n := 0
	for {
		if _, ok := p.Param(param, n); !ok {
			return n
		}
		n++
	}
}

// BenchmarkHTTPParamsKinds reads the value of each other kind, as Enter
// does (value 0, then the look for value 1).
func BenchmarkHTTPParamsKinds(b *testing.B) {
	x, err := extractors.New(extractors.WithTrustedProxies("10.0.0.0/8"))
	if err != nil {
		b.Fatal(err)
	}
	r := newRequest(b, "GET", "/items/1?a=1&tenant=acme", "10.0.0.1:4000",
		"X-Forwarded-For", "198.51.100.7, 10.0.0.2", "Cookie", "a=1; sid=abc")
	for _, param := range []string{"query:tenant", "cookie:sid", "ip", "peer", "method", "host"} {
		b.Run(param, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if n := count(x.HTTPParams(r, nil), param); n != 1 {
					b.Fatal(param, n)
				}
			}
		})
	}
}

// BenchmarkHTTPParamsIPv6 reads the ip param of IPv6 clients as Enter does
// (value 0, then the look for value 1), reusing a Params as the
// adapters do, so that only the ip param's own cost shows: the socket peer,
// and a trusted proxy's X-Forwarded-For.
func BenchmarkHTTPParamsIPv6(b *testing.B) {
	x, err := extractors.New(extractors.WithTrustedProxies("10.0.0.0/8"))
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name   string
		remote string
		header []string
	}{
		{"peer", "[2001:db8:1:2:3:4:5:6]:4000", nil},
		{"xff", "10.0.0.1:4000", []string{"X-Forwarded-For", "2001:db8:1:2:3:4:5:6, 10.0.0.2"}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			r := newRequest(b, "GET", "/", bc.remote, bc.header...)
			var p extractors.Params
			b.ReportAllocs()
			for b.Loop() {
				p.ResetHTTP(x, r, nil)
				if n := count(&p, "ip"); n != 1 {
					b.Fatal(n)
				}
			}
		})
	}
}

// BenchmarkHTTPResource is the cached resource name of a gin-style route.
func BenchmarkHTTPResource(b *testing.B) {
	x, err := extractors.New()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if x.HTTPResource("GET", "/users/:uid/items/:id") != "GET /users/{uid}/items/{id}" {
			b.Fatal("name")
		}
	}
}

// BenchmarkHTTPResourceParallel is BenchmarkHTTPResource on every core.
func BenchmarkHTTPResourceParallel(b *testing.B) {
	x, err := extractors.New()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			_ = x.HTTPResource("GET", "/users/:uid/items/:id")
		}
	})
}

// BenchmarkClientIP: the socket peer (no proxy trusted), and a trusted
// proxy's X-Forwarded-For and Forwarded walked over three hops.
func BenchmarkClientIP(b *testing.B) {
	for _, bc := range []struct {
		name   string
		remote string
		header []string
	}{
		{"peer", "203.0.113.1:4000", []string{"X-Forwarded-For", "6.6.6.6"}},
		{"xff", "10.0.0.1:4000", []string{"X-Forwarded-For", "6.6.6.6, 198.51.100.7, 10.0.0.2"}},
		{"forwarded", "10.0.0.1:4000", []string{"Forwarded", `for=6.6.6.6, for="[2001:db8::7]:80", for=10.0.0.2`}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			x, err := extractors.New(extractors.WithTrustedProxies("10.0.0.0/8"))
			if err != nil {
				b.Fatal(err)
			}
			r := newRequest(b, "GET", "/", bc.remote, bc.header...)
			b.ReportAllocs()
			for b.Loop() {
				if !x.ClientIP(r).IsValid() {
					b.Fatal("invalid")
				}
			}
		})
	}
}

// TestHTTPParamsAllocs holds HTTPParams to its budget: the params value is
// the one allocation, whatever header, cookie, path, method or peer is read.
func TestHTTPParamsAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under the race detector")
	}
	x, err := extractors.New(extractors.WithTrustedProxies("10.0.0.0/8"))
	if err != nil {
		t.Fatal(err)
	}
	r := newRequest(t, "GET", "/?tenant=acme", "10.0.0.1:4000", "X-User-ID", "alice, bob",
		"X-Forwarded-For", "198.51.100.7", "Cookie", "sid=abc")
	r.SetPathValue("id", "7")
	for _, param := range []string{"header:X-User-ID", "metadata:x-user-id", "query:tenant", "cookie:sid", "path:id", "ip", "peer", "method", "host"} {
		allocs := testing.AllocsPerRun(200, func() {
			p := x.HTTPParams(r, nil)
			for i := 0; ; i++ {
				if _, ok := p.Param(param, i); !ok {
					break
				}
			}
		})
		if allocs > 1 {
			t.Errorf("%s: %v allocations per request, want at most 1", param, allocs)
		}
	}
}
