package sluicehttp

import (
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/sluicekit/sluice/adapters/httpadapter"
	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/extractors"
)

// router is what Middleware needs of the handler it wraps to name requests
// by their route before the handler runs: *http.ServeMux's Handler method,
// which returns the pattern a request matches ("" when none does).
type router interface {
	Handler(r *http.Request) (h http.Handler, pattern string)
}

// Middleware returns a middleware that puts every request to next through
// guard:
//
//	http.ListenAndServe(addr, sluicehttp.Middleware(guard)(mux))
//
// The resource of a request is "METHOD TEMPLATE", TEMPLATE being the
// pattern of next that the request matches ("GET /items/{id}"), or
// extractors.Unmatched when it matches none. METHOD is the pattern's method
// when it has one, so that the HEAD requests a GET pattern serves count
// against the GET route's limits; else the request's. Since the middleware runs
// before next routes the request, it asks next for the pattern: when next
// has a method Handler(*http.Request) (http.Handler, string), as a
// *http.ServeMux has, through that method, which routes the request;
// otherwise it reads r.Pattern, which is set when the middleware itself is
// behind a ServeMux (mux.Handle("/api/", Middleware(g)(api))), and ""
// (Unmatched) when nothing routed the request. Wrap the handlers one by
// one, or use WithResource, when next is a router of another kind. A
// request that next's Handler method routed is then served by
// next.ServeHTTP, which routes it again, except when next is a
// *http.ServeMux and the pattern has no wildcards: then the middleware
// calls the handler it found, with r.Pattern set, as the ServeMux would,
// and the request is routed once.
//
// Path params (path:NAME) are the wildcards of the matched pattern, read
// from the request's path the way ServeMux reads them.
//
// Middleware panics when guard is nil or New returns an error, and the
// function it returns panics when next is nil, as http.Handle does with a
// nil handler.
func Middleware(guard *core.Guard, opts ...Option) func(next http.Handler) http.Handler {
	mw, err := newMiddleware("Middleware", guard, opts)
	if err != nil {
		panic(err.Error())
	}
	return mw
}

// New is Middleware returning an error instead of panicking: the error of
// an invalid option, or of a rule in force naming a param the Extractor
// cannot supply (core.ParamSource). New panics when guard is nil.
func New(guard *core.Guard, opts ...Option) (func(next http.Handler) http.Handler, error) {
	return newMiddleware("New", guard, opts)
}

func newMiddleware(fn string, guard *core.Guard, opts []Option) (func(next http.Handler) http.Handler, error) {
	c, err := serverConfig(fn, guard, opts)
	if err != nil {
		return nil, err
	}
	return func(next http.Handler) http.Handler {
		if next == nil {
			panic("sluicehttp: Middleware: nil http.Handler")
		}
		router, _ := next.(router)
		mux, _ := next.(*http.ServeMux)
		return &handler{config: c, next: next, router: router, direct: mux != nil && muxRoutesPatterns()}
	}, nil
}

// Wrap returns h put through guard, for one route of a ServeMux:
//
//	mux.Handle("GET /items/{id}", sluicehttp.Wrap(guard, items))
//
// The resource of a request is "METHOD TEMPLATE" from r.Pattern, the
// pattern the ServeMux matched ("GET /items/{id}"; the host of a pattern
// with one is dropped, and its method, when it has one, is METHOD, as with
// Middleware); a request that no ServeMux routed (r.Pattern is "") is
// extractors.Unmatched. WithResource names resources otherwise.
// Path params (path:NAME) are r.PathValue(NAME).
//
// Wrap panics when guard or h is nil, or when an option is invalid (as New
// returns it).
func Wrap(guard *core.Guard, h http.Handler, opts ...Option) http.Handler {
	c, err := serverConfig("Wrap", guard, opts)
	if err != nil {
		panic(err.Error())
	}
	if h == nil {
		panic("sluicehttp: Wrap: nil http.Handler")
	}
	return &handler{config: c, next: h}
}

// Handle registers h on mux under pattern, as mux.Handle does, and tells
// guard the route (core.Guard.AddRoutes). At their first request,
// Middleware and Wrap have the Guard check its rules against the routes
// told so, and warn about the rules that match none, then and at every
// change of its rules (core.Guard.CheckRoutes). A ServeMux cannot list its
// patterns: register every route of the service through Handle, or the
// rules of the others are reported.
//
//	mux := http.NewServeMux()
//	sluicehttp.Handle(guard, mux, "GET /items/{id}", items)
//	http.ListenAndServe(addr, sluicehttp.Middleware(guard)(mux))
//
// With Wrap, give Handle the wrapped handler:
//
//	sluicehttp.Handle(guard, mux, "GET /items/{id}", sluicehttp.Wrap(guard, items))
//
// The route is named as the middleware names its requests ("GET
// /items/{id}"; a pattern without a method serves every method) with the
// default Extractor. Handle panics when guard is nil, and as mux.Handle
// does (a nil handler, a bad or conflicting pattern).
func Handle(guard *core.Guard, mux *http.ServeMux, pattern string, h http.Handler) {
	if guard == nil {
		panic("sluicehttp: Handle: nil *core.Guard (make one with core.New)")
	}
	mux.Handle(pattern, h)
	x, err := extractors.New()
	if err != nil { // cannot happen without options
		panic("sluicehttp: Handle: default extractor: " + err.Error())
	}
	guard.AddRoutes(httpadapter.RouteNames(x, []httpadapter.Route{{Method: patternMethod(pattern, ""), Path: pattern}})...)
}

// handler is the middleware around one http.Handler.
type handler struct {
	config
	next   http.Handler
	router router // next as a router; nil for Wrap, or when next is none
	// direct: next is a ServeMux, whose handler for a request without
	// wildcard values may be called directly (see serve).
	direct bool
	// entering lends what Enter reads and the RateLimit fields are made
	// with, until Enter returned and the fields are set.
	entering sync.Pool // of *entering
}

// entering is what Enter reads of a request, its params, and what its
// RateLimit fields are made with.
type entering struct {
	params extractors.Params
	fields httpadapter.QuotaFields
}

// muxRoutesPatterns reports whether ServeMux is the one of Go 1.22 and
// later, which routes by patterns with methods and wildcards and sets
// r.Pattern, rather than the one of Go 1.21 that GODEBUG httpmuxgo121=1
// selects. It asks a ServeMux of its own.
func muxRoutesPatterns() bool {
	probe := http.NewServeMux()
	probe.Handle("GET /{x}", http.NotFoundHandler())
	_, pattern := probe.Handler(&http.Request{Method: http.MethodGet, Host: "probe", URL: &url.URL{Path: "/a"}})
	return pattern == "GET /{x}"
}

// request is the state of one request: the ResponseWriter handed to next,
// which records the status for the error classifier, and the pattern its
// path params are read by. It is the middleware's one allocation per
// request. The writer is not reused for another request, since a handler
// may keep it.
type request struct {
	w        responseWriter
	h        *handler
	r        *http.Request
	body     httpadapter.Body // r's body, as next reads it: a read that failed is the client's
	pat      string           // the pattern of the router that r matches, once patFound
	patFound bool
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.skip != nil && h.skip(r) {
		h.next.ServeHTTP(w, r)
		return
	}
	if h.resource == nil && h.RoutesPending() {
		h.CheckRoutes(nil) // those Handle told
	}
	rq := &request{w: responseWriter{ResponseWriter: w}, h: h, r: r}
	var resource string
	var route http.Handler // the router's handler for r, when it was asked
	switch {
	case h.resource != nil:
		resource = h.resource(r)
	case h.router != nil:
		route, rq.pat = h.router.Handler(r)
		if r.Method == http.MethodConnect {
			rq.pat = h.redirectPattern(r, rq.pat)
		}
		rq.patFound = true
		resource = h.Extractor.HTTPResource(patternMethod(rq.pat, r.Method), rq.pat)
	default:
		resource = h.Extractor.HTTPResource(patternMethod(r.Pattern, r.Method), r.Pattern)
	}
	var path extractors.PathParams // nil: r.PathValue
	if h.router != nil {
		path = rq
	}
	n := int64(1)
	if h.cost != nil {
		n = h.cost(r)
	}
	en, _ := h.entering.Get().(*entering)
	if en == nil {
		en = new(entering)
	}
	var quotas *[]core.Quota
	if !h.NoQuota {
		quotas = &en.fields.Quotas
	}
	e, err := h.Enter(&en.params, r, resource, n, path, quotas)
	if err == nil && quotas != nil {
		h.SetQuotaHeaders(w.Header(), &en.fields)
	}
	h.entering.Put(en)
	if err != nil {
		switch b, gone := httpadapter.Rejection(r.Context(), err); {
		case b != nil:
			h.block(w, r, b)
		case gone:
			// The request's context ended while it waited for its turn:
			// the client is gone (or the server ended the request), and
			// nothing is written.
		default:
			httpadapter.WriteEnterError(w)
		}
		return
	}
	rq.body.Wrap(r)
	rq.w.body = &rq.body
	finished := false
	defer func() {
		// r gets its body back for net/http, also after a panic (a recovery may answer).
		rq.body.Unwrap(r)
		if !finished { // next panicked: count it, and let the panic go on
			e.Exit(rq.body.ExitError(httpadapter.PanicExitError(r.Context())))
		}
	}()
	h.serve(route, rq.pat, &rq.w, r)
	finished = true
	if rq.body.ReadCloser != nil && r.Body != &rq.body && overLimit(r.Body) {
		tooLarge(w) // the handler's limit on r.Body was hit, and w could not hear it
	}
	e.Exit(rq.body.ExitError(h.HandlerExitError(r.Context(), rq.w.status != 0, rq.w.result(), nil)))
}

// patternMethod returns the method of a ServeMux pattern ("GET" for
// "GET /items/{id}"), or method when the pattern has none. A pattern with
// GET also serves HEAD requests: they run the GET handler, so they are the
// GET route's traffic and count against its limits, instead of slipping
// past them as a resource of their own.
func patternMethod(pattern, method string) string {
	for i := 0; i < len(pattern); i++ {
		switch pattern[i] {
		case '/':
			return method // no method before the path
		case ' ', '\t':
			if i > 0 && strings.IndexByte(pattern[i:], '/') >= 0 {
				return pattern[:i]
			}
			return method
		}
	}
	return method
}

// redirectPattern returns the pattern of a CONNECT request that the router
// matched as pat. A ServeMux that redirects a CONNECT request to its path
// with a trailing slash returns that path as the pattern
// ("/users/u1/" for "/users/{id}/"): a name the client chose, which
// becomes the pattern of the path it is redirected to.
func (h *handler) redirectPattern(r *http.Request, pat string) string {
	if r.URL == nil || r.URL.Path == "" || pat != r.URL.Path+"/" {
		return pat // no redirect: a subtree's pattern ("/static/" for "/static/app.js") is the route's
	}
	to := *r
	to.URL = &url.URL{Host: r.URL.Host, Path: pat}
	_, pat = h.router.Handler(&to)
	return pat
}

// pattern returns the pattern of the router that r matches.
func (rq *request) pattern() string {
	if !rq.patFound {
		_, rq.pat = rq.h.router.Handler(rq.r)
		rq.patFound = true
	}
	return rq.pat
}

// serve serves r with route, the router's handler for r, when h
// routed r to name it (route is not nil) and calling route directly is what
// the ServeMux would do, with r.Pattern set to pattern; else with next. A
// ServeMux also sets unexported fields for r.PathValue, so it routes the
// requests to patterns with wildcards itself, as well as those another
// ServeMux routed before (r.Pattern set: their path values are the other
// ServeMux's until this one routes them), and those it answers itself
// (RequestURI "*", no pattern matched).
func (h *handler) serve(route http.Handler, pattern string, w http.ResponseWriter, r *http.Request) {
	if !h.direct || route == nil || pattern == "" || r.Pattern != "" || r.RequestURI == "*" ||
		strings.IndexByte(pattern, '{') >= 0 {
		h.next.ServeHTTP(w, r)
		return
	}
	r.Pattern = pattern
	route.ServeHTTP(w, r)
}

// PathParam returns the value of the wildcard name of the pattern r
// matches (extractors.PathParams), as the router will give it to
// r.PathValue.
func (rq *request) PathParam(name string) (string, bool) {
	if rq.r.URL == nil {
		return "", false
	}
	return patternValue(rq.pattern(), rq.r.URL.EscapedPath(), name)
}
