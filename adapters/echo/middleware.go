package sluiceecho

import (
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/labstack/echo/v4"

	"github.com/sluicekit/sluice/adapters/httpadapter"
	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/extractors"
)

// Middleware returns an echo middleware that puts every request through
// guard:
//
//	e.Use(sluiceecho.Middleware(guard))
//
// The resource of a request is "METHOD TEMPLATE", TEMPLATE being the route
// that matched (c.Path()) with its parameters written as in net/http
// ("/items/:id" is "GET /items/{id}", "/files/*" is "GET /files/{*...}");
// requests that matched no route share extractors.Unmatched: those echo
// answers 404 (no path, or one of the catch-all routes Group.Use adds so
// that a group's middleware sees its 404s, answered by
// echo.NotFoundHandler) or 405 (a path without the method). A route
// registered with e.RouteNotFound and a handler of the application is a
// route: its requests have its template. Path params (path:NAME) are the route's parameters
// (c.ParamNames, c.ParamValues).
//
// A blocked request gets DefaultBlockHandler's response (or
// WithBlockHandler's). An admitted one gets the RateLimit fields
// (WithRateLimitFields), runs the next handler and is then counted as a
// success or an error (WithErrorClassifier); a panic is counted as an
// error and goes on, to middleware.Recover when it is installed before
// this middleware. A request whose context ends while it waits for a
// leaky-bucket turn (the client went away) gets nothing written by the
// middleware, which returns nil.
//
// At its first request the middleware tells the Guard the routes of the
// echo instance (e.Routes), and the Guard warns about the rules that match
// none of them, then and at every change of its rules
// (core.Guard.CheckRoutes); not with WithResource, which names requests
// otherwise. Routes registered after the first request are not told.
//
// Use Middleware with e.Use (after routing) rather than e.Pre, which runs
// before the route is known: every request would then be Unmatched.
//
// Middleware panics when guard is nil or New returns an error.
func Middleware(guard *core.Guard, opts ...Option) echo.MiddlewareFunc {
	mw, err := newMiddleware("Middleware", guard, opts)
	if err != nil {
		panic(err.Error())
	}
	return mw
}

// New is Middleware returning an error instead of panicking: the error of
// an invalid option, or of a rule in force naming a param the Extractor
// cannot supply (core.ParamSource). New panics when guard is nil.
func New(guard *core.Guard, opts ...Option) (echo.MiddlewareFunc, error) {
	return newMiddleware("New", guard, opts)
}

func newMiddleware(fn string, guard *core.Guard, opts []Option) (echo.MiddlewareFunc, error) {
	m := &middleware{}
	m.Init("sluiceecho: "+fn, guard)
	for i, o := range opts {
		if o == nil {
			return nil, fmt.Errorf("sluiceecho: %s: option %d is nil", fn, i)
		}
		if err := o.apply(&m.config); err != nil {
			return nil, fmt.Errorf("sluiceecho: %s: %w", fn, err)
		}
	}
	if m.Classify == nil {
		m.Classify = classify
	}
	if err := m.FinishErr(); err != nil {
		return nil, fmt.Errorf("sluiceecho: %s: %w", fn, err)
	}
	if m.block == nil {
		m.block = DefaultBlockHandler
	}
	m.requests.New = func() any { return new(request) }
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		return func(c echo.Context) error { return m.serve(c, next) }
	}, nil
}

// middleware is the state of one New: its configuration, and a pool of
// the params it hands Enter, which the Guard uses only during Enter, so
// that they cost no allocation per request.
type middleware struct {
	config
	requests sync.Pool // of *request
	// notFound holds the paths of echo's own catch-all routes (routesOf),
	// each with the methods an application route serves at that path;
	// stored before the routes are checked, at the first request.
	notFound atomic.Pointer[map[string][]string]
}

// request is what Enter reads of an echo request: its params, the
// context they read route parameters and c.Get values from, and what its
// RateLimit fields are made with.
type request struct {
	params  extractors.Params
	path    pathParams
	proxied proxiedParams
	fields  httpadapter.QuotaFields
}

// classify is the default error classifier of echo requests.
func classify(status int, err error) bool {
	if err != nil && !isClientHTTPError(err) {
		return true
	}
	return status >= http.StatusInternalServerError
}

// isClientHTTPError reports whether err is an *echo.HTTPError with a code
// below 500: echo's way for a handler to answer 404 or 400.
func isClientHTTPError(err error) bool {
	he, ok := err.(*echo.HTTPError)
	if !ok && !errors.As(err, &he) {
		return false
	}
	return he.Code < http.StatusInternalServerError
}

// pathParams is the extractors.PathParams of an echo request, over its
// c.ParamNames and c.ParamValues.
type pathParams struct{ c echo.Context }

// PathParam returns the value of the route parameter name, decoded as
// net/http decodes it: echo routes by the request's raw path when it has
// escapes of its own (URL.RawPath), and then gives the values undecoded.
func (p *pathParams) PathParam(name string) (string, bool) {
	names, values := p.c.ParamNames(), p.c.ParamValues()
	for i, n := range names {
		if n == name && i < len(values) {
			if p.c.Request().URL.RawPath != "" {
				return httpadapter.PathUnescape(values[i]), true
			}
			return values[i], true
		}
	}
	return "", false
}

// ContextValue returns the value c.Get gives for key, a string.
func (p *pathParams) ContextValue(key any) (any, bool) {
	k, ok := key.(string)
	if !ok {
		return nil, false
	}
	v := p.c.Get(k)
	return v, v != nil
}

// proxiedParams is a pathParams whose client IP is c.RealIP()
// (WithFrameworkClientIP).
type proxiedParams struct{ pathParams }

// ClientIP returns c.RealIP().
func (p *proxiedParams) ClientIP() string { return p.c.RealIP() }

// resourceOf returns the resource of the request c.
func (m *middleware) resourceOf(c echo.Context, r *http.Request) string {
	if m.resource != nil {
		return m.resource(c)
	}
	if m.RoutesPending() {
		routes, notFound := routesOf(c.Echo())
		m.notFound.Store(&notFound)
		m.CheckRoutes(routes)
	}
	path := c.Path()
	// Echo routes an unmatched request to its NotFoundHandler with no path
	// (or a group's catch-all path), or, when the path exists without the
	// method, to its MethodNotAllowedHandler with the path of the route and
	// the Allow header's value stored in the context.
	if path == "" || c.Get(echo.ContextKeyHeaderAllow) != nil || m.echoNotFound(path, r.Method) {
		return extractors.Unmatched
	}
	return m.Extractor.HTTPResource(r.Method, path)
}

// echoNotFound reports whether a request of method routed to path reached
// one of echo's own catch-all routes.
func (m *middleware) echoNotFound(path, method string) bool {
	nf := m.notFound.Load()
	if nf == nil || len(*nf) == 0 {
		return false
	}
	methods, ok := (*nf)[path]
	return ok && !slices.Contains(methods, method)
}

// routesOf returns the routes of e, and the paths of the catch-all routes
// echo adds itself (Group.Use: RouteNotFound routes answered by
// echo.NotFoundHandler), which are no route of the application, each
// with the methods a route of e serves at that path. A RouteNotFound route
// serves every method.
func routesOf(e *echo.Echo) ([]httpadapter.Route, map[string][]string) {
	own := runtime.FuncForPC(reflect.ValueOf(echo.NotFoundHandler).Pointer()).Name() // as echo names routes
	var routes []httpadapter.Route
	notFound := map[string][]string{}
	for _, r := range e.Routes() {
		method := r.Method
		if method == echo.RouteNotFound {
			if r.Name == own {
				notFound[r.Path] = nil
				continue
			}
			method = ""
		}
		routes = append(routes, httpadapter.Route{Method: method, Path: r.Path})
	}
	for _, r := range routes {
		if methods, ok := notFound[r.Path]; ok {
			notFound[r.Path] = append(methods, r.Method)
		}
	}
	return routes, notFound
}

func (m *middleware) serve(c echo.Context, next echo.HandlerFunc) (err error) {
	if m.skip != nil && m.skip(c) {
		return next(c)
	}
	r := c.Request()
	resource := m.resourceOf(c, r)
	n := int64(1)
	if m.cost != nil {
		n = m.cost(c)
	}
	rq := m.requests.Get().(*request)
	var path extractors.PathParams = &rq.path
	rq.path.c = c
	if m.clientIP {
		rq.proxied.c = c
		path = &rq.proxied
	}
	e, err := m.Enter(&rq.params, r, resource, n, path, &rq.fields.Quotas)
	rq.path.c, rq.proxied.c = nil, nil
	if err == nil && !m.NoQuota {
		m.SetQuotaHeaders(c.Response().Header(), &rq.fields)
	}
	m.requests.Put(rq) // Enter and the fields are done with it
	if err != nil {
		switch b, gone := httpadapter.Rejection(r.Context(), err); {
		case b != nil:
			return m.block(c, b)
		case gone:
			// The request's context ended while it waited for its turn:
			// the client is gone, and the middleware writes nothing.
			return nil
		default:
			httpadapter.WriteEnterError(c.Response())
			return nil
		}
	}
	body := httpadapter.WrapBody(r)
	finished := false
	defer func() {
		// r gets its body back for net/http, also after a panic (a recovery may answer).
		body.Unwrap(r)
		if !finished { // next panicked: count it, and let the panic go on
			e.Exit(body.ExitError(httpadapter.PanicExitError(r.Context())))
		}
	}()
	err = next(c)
	finished = true
	e.Exit(body.ExitError(m.HandlerExitError(r.Context(), c.Response().Committed, status(c, err), err)))
	return err
}

// status returns the status the response to c has, or will have once
// echo's error handler has dealt with err.
func status(c echo.Context, err error) int {
	res := c.Response()
	if res.Committed {
		return res.Status
	}
	if err != nil {
		var he *echo.HTTPError
		if errors.As(err, &he) {
			return he.Code
		}
		return http.StatusInternalServerError
	}
	return http.StatusOK
}
