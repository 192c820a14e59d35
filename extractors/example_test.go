package extractors_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"time"

	sluicehttp "github.com/sluicekit/sluice/adapters/nethttp"
	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/extractors"
)

// An HTTP middleware names the resource after the matched route and hands
// the Guard the request's params; here each X-User-ID may make 2 requests
// per window.
func Example() {
	guard, err := core.New(core.WithRules(core.Rule{
		Name: "per-user", Resource: "GET /items/{id}", Kind: core.KindHotspot,
		Param: "header:X-User-ID", Limit: 2, Window: 3600e9,
	}))
	if err != nil {
		log.Fatal(err)
	}
	x, err := extractors.New()
	if err != nil {
		log.Fatal(err)
	}

	for i := 1; i <= 3; i++ {
		r := httptest.NewRequest("GET", "/items/7", nil)
		r.Header.Set("X-User-ID", "alice")
		resource := x.HTTPResource(r.Method, "/items/:id") // gin's c.FullPath()
		var params extractors.Params
		params.ResetHTTP(x, r, nil)
		e, err := guard.Enter(r.Context(), resource, core.WithParams(&params))
		var b *core.BlockedError
		if errors.As(err, &b) {
			fmt.Printf("request %d to %s: blocked by %s\n", i, resource, b.Rule)
			continue
		}
		fmt.Printf("request %d to %s: passed\n", i, resource)
		e.Exit(nil)
	}
	// Output:
	// request 1 to GET /items/{id}: passed
	// request 2 to GET /items/{id}: passed
	// request 3 to GET /items/{id}: blocked by per-user
}

// gin, echo and net/http spell one route three ways; the resource name is
// the same, so one rules file serves every adapter.
func ExampleExtractor_HTTPResource() {
	x, err := extractors.New()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(x.HTTPResource("GET", "/files/:dir/*path"))          // gin, echo
	fmt.Println(x.HTTPResource("GET", "GET /files/{dir}/{path...}")) // net/http r.Pattern
	fmt.Println(x.HTTPResource("BREW", "/pot/:id"))                  // a made-up method
	fmt.Println(x.HTTPResource("GET", ""))                           // no route matched
	// Output:
	// GET /files/{dir}/{path...}
	// GET /files/{dir}/{path...}
	// OTHER /pot/{id}
	// (unmatched)
}

// Params carry every value a request has for them: repeated headers and
// comma-separated elements each count.
func ExampleParams_Param() {
	x, err := extractors.New()
	if err != nil {
		log.Fatal(err)
	}
	r := httptest.NewRequest("GET", "/items/7?tenant=acme", nil)
	r.Header.Add("X-User-ID", "alice, bob")
	r.Header.Add("X-User-ID", "carol")
	r.SetPathValue("id", "7") // as net/http's ServeMux does

	var p extractors.Params
	p.ResetHTTP(x, r, nil)
	for _, param := range []string{"header:x-user-id", "query:tenant", "path:id", "method", "cookie:sid"} {
		var vs []string
		for i := 0; ; i++ {
			v, ok := p.Param(param, i)
			if !ok {
				break
			}
			vs = append(vs, v)
		}
		fmt.Printf("%s: %q\n", param, vs)
	}
	// Output:
	// header:x-user-id: ["alice" "bob" "carol"]
	// query:tenant: ["acme"]
	// path:id: ["7"]
	// method: ["GET"]
	// cookie:sid: []
}

// Behind a proxy that sets X-Real-IP and passes a client's own
// X-Forwarded-For on, name its header: the ip param is then the proxy's
// X-Real-IP whatever the client sends.
func ExampleWithClientIPHeader() {
	x, err := extractors.New(extractors.WithTrustedProxies("10.0.0.0/8"), extractors.WithClientIPHeader("X-Real-IP"))
	if err != nil {
		log.Fatal(err)
	}
	r := httptest.NewRequest("GET", "/", nil)
	r.RemoteAddr = "10.0.0.1:4000"                 // the proxy
	r.Header.Set("X-Forwarded-For", "203.0.113.9") // sent by the client
	r.Header.Set("X-Real-IP", "198.51.100.7")      // set by the proxy
	ip, _ := x.HTTPParams(r, nil).Param("ip", 0)
	fmt.Println(ip)
	// Output: 198.51.100.7
}

// A custom param is any function of the request, registered by the name
// rules use.
func ExampleWithHTTPParam() {
	x, err := extractors.New(extractors.WithHTTPParam("tenant", func(r *http.Request) []string {
		if t := r.Header.Get("X-Tenant"); t != "" {
			return []string{t}
		}
		return nil
	}))
	if err != nil {
		log.Fatal(err)
	}
	r := httptest.NewRequest("GET", "/", nil)
	r.Header.Set("X-Tenant", "acme")
	var p extractors.Params
	p.ResetHTTP(x, r, nil)
	fmt.Println(p.Param("tenant", 0))
	fmt.Println(x.CheckParam("tenant"), x.CheckParam("tennant") != nil)
	// Output:
	// acme true
	// <nil> true
}

// A middleware that allocates one object per request anyway (here, the
// ResponseWriter it hands the handler, which would record the status)
// holds the request's params inside it, so that they cost no allocation of
// their own.
func ExampleParams() {
	guard, err := core.New(core.WithRules(core.Rule{
		Name: "per-user", Resource: "*", Kind: core.KindHotspot,
		Param: "header:X-User-ID", Limit: 1, Window: 3600e9,
	}))
	if err != nil {
		log.Fatal(err)
	}
	x, err := extractors.New()
	if err != nil {
		log.Fatal(err)
	}
	type request struct {
		http.ResponseWriter
		params extractors.Params
	}
	middleware := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			rq := &request{ResponseWriter: w} // the one allocation
			rq.params.ResetHTTP(x, r, nil)
			e, err := guard.Enter(r.Context(), x.HTTPResource(r.Method, r.Pattern), core.WithParams(&rq.params))
			if err != nil {
				http.Error(w, "slow down", http.StatusTooManyRequests)
				return
			}
			defer e.Exit(nil)
			next.ServeHTTP(rq, r)
		})
	}
	h := middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	for _, user := range []string{"alice", "bob", "alice"} {
		w := httptest.NewRecorder()
		r := httptest.NewRequest("GET", "/", nil)
		r.Header.Set("X-User-ID", user)
		h.ServeHTTP(w, r)
		fmt.Println(user, w.Code)
	}
	// Output:
	// alice 200
	// bob 200
	// alice 429
}

// CheckParam says what is wrong with a param spec, or that it names a
// custom param the Extractor was not given.
func ExampleExtractor_CheckParam() {
	x, err := extractors.New()
	if err != nil {
		log.Fatal(err)
	}
	for _, spec := range []string{"header:X-User-ID", "ip", "tenant", "form:x"} {
		fmt.Printf("%s: %v\n", spec, x.CheckParam(spec))
	}
	// Output:
	// header:X-User-ID: <nil>
	// ip: <nil>
	// tenant: "tenant" is not a custom param of the extractor (registered: none): register it with extractors.WithHTTPParam, WithGRPCParam or WithContextParam and give that Extractor to the Guard (core.WithParamSource)
	// form:x: extractors: param has unknown kind "form" in "form:x" (want header, query, cookie, path or metadata)
}

// A param read from a value an authentication middleware stored in the
// request's context: rules name it "user".
func ExampleWithContextParam() {
	type userKey struct{}
	x, err := extractors.New(extractors.WithContextParam("user", userKey{}))
	if err != nil {
		log.Fatal(err)
	}
	r := httptest.NewRequest(http.MethodGet, "/items/7", nil)
	r = r.WithContext(context.WithValue(r.Context(), userKey{}, "alice"))
	var p extractors.Params
	p.ResetHTTP(x, r, nil)
	fmt.Println(p.Param("user", 0))
	fmt.Println(x.HTTPSource().CheckParam("user"))
	// Output:
	// alice true
	// <nil>
}

// An Extractor is declared once, to the Guard: its adapters find it there.
// This one trusts the proxies in 10.0.0.0/8, so each client they forward
// has a limit of its own.
func ExampleForAdapter() {
	x, err := extractors.New(extractors.WithTrustedProxies("10.0.0.0/8"))
	if err != nil {
		log.Fatal(err)
	}
	guard, err := core.New(core.WithParamSource(x), core.WithRules(core.Rule{
		Name: "per-ip", Resource: "GET /hello", Kind: core.KindHotspot, Param: "ip", Limit: 1, Window: time.Hour,
	}))
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /hello", func(http.ResponseWriter, *http.Request) {})
	h := sluicehttp.Middleware(guard)(mux) // reads params with x

	for _, client := range []string{"203.0.113.1", "203.0.113.1", "203.0.113.2"} {
		r := httptest.NewRequest(http.MethodGet, "/hello", nil)
		r.RemoteAddr = "10.0.0.7:50000" // the proxy
		r.Header.Set("X-Forwarded-For", client)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		fmt.Println(client, w.Code)
	}
	// Output:
	// 203.0.113.1 200
	// 203.0.113.1 429
	// 203.0.113.2 200
}
