package extractors_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"time"

	sluicehttp "github.com/sluicekit/sluice/adapters/nethttp"
	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/extractors"
)

// An adapter reads the params of hotspot rules with its Extractor: here
// each X-User-ID may make 2 requests per hour to the route GET
// /items/{id}, written "/items/:id" in gin and echo.
func Example() {
	guard, err := core.New(core.WithRules(core.Rule{
		Name: "per-user", Resource: "GET /items/{id}", Kind: core.KindHotspot,
		Param: "header:X-User-ID", Limit: 2, Window: time.Hour,
	}))
	if err != nil {
		log.Fatal(err)
	}
	x, err := extractors.New(extractors.WithTrustedProxies("10.0.0.0/8"))
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /items/{id}", func(http.ResponseWriter, *http.Request) {})
	h := sluicehttp.Middleware(guard, sluicehttp.WithExtractor(x))(mux)

	for _, user := range []string{"alice", "alice", "bob", "alice"} {
		fmt.Println(user, serve(h, "X-User-ID", user))
	}
	// Output:
	// alice 200
	// alice 200
	// bob 200
	// alice 429
}

// serve returns the status h answers a GET /items/7 with the header name
// set to value.
func serve(h http.Handler, name, value string) int {
	w := httptest.NewRecorder()
	r := httptest.NewRequest("GET", "/items/7", nil)
	r.Header.Set(name, value)
	h.ServeHTTP(w, r)
	return w.Code
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
	fmt.Println(x.CheckParam("tenant"), x.CheckParam("tennant") != nil)

	guard, err := core.New(core.WithRules(core.Rule{
		Name: "per-tenant", Resource: "*", Kind: core.KindHotspot, Param: "tenant", Limit: 1, Window: time.Hour,
	}))
	if err != nil {
		log.Fatal(err)
	}
	h := sluicehttp.Wrap(guard, http.NotFoundHandler(), sluicehttp.WithExtractor(x))
	fmt.Println(serve(h, "X-Tenant", "acme"), serve(h, "X-Tenant", "acme"), serve(h, "X-Tenant", "globex"))
	// Output:
	// <nil> true
	// 404 429 404
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
	// tenant: "tenant" is not a custom param of the extractor (registered: none): register it with extractors.WithHTTPParam, WithGRPCParam or WithContextParam and give that Extractor to the adapter (WithExtractor)
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
	guard, err := core.New(core.WithRules(core.Rule{
		Name: "per-user", Resource: "*", Kind: core.KindHotspot, Param: "user", Limit: 1, Window: time.Hour,
	}))
	if err != nil {
		log.Fatal(err)
	}
	limited := sluicehttp.Wrap(guard, http.NotFoundHandler(), sluicehttp.WithExtractor(x))
	auth := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { // the authentication middleware
		ctx := context.WithValue(r.Context(), userKey{}, r.Header.Get("Authorization"))
		limited.ServeHTTP(w, r.WithContext(ctx))
	})
	fmt.Println(serve(auth, "Authorization", "alice"), serve(auth, "Authorization", "alice"))
	// Output:
	// 404 429
}
