package sluicegin

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/sluicekit/sluice/adapters/httpadapter"
	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/extractors"
)

// Middleware returns a gin middleware that puts every request through
// guard:
//
//	r.Use(sluicegin.Middleware(guard))
//
// The resource of a request is "METHOD TEMPLATE", TEMPLATE being the route
// that matched (c.FullPath()) with its parameters written as in net/http
// ("/items/:id" is "GET /items/{id}", "/files/*path" is
// "GET /files/{path...}"); requests that matched no route (404, 405) share
// extractors.Unmatched. Path params (path:NAME) are the route's parameters
// (c.Params).
//
// A blocked request gets DefaultBlockHandler's response (or
// WithBlockHandler's) and the chain is aborted. An admitted one gets the
// RateLimit fields (WithRateLimitFields), runs the rest of the chain
// (c.Next) and is then counted as a success or an error
// (WithErrorClassifier); a panic in the chain is counted as an error and
// goes on, to gin.Recovery when it is installed before this middleware.
// A request whose context ends while it waits for a leaky-bucket turn (the
// client went away) is aborted without a response from the middleware.
//
// With WithRoutes, the Guard checks its rules against the engine's routes
// at the first request and at every change of its rules, and warns about
// the rules that match none (core.Guard.CheckRoutes).
//
// Middleware panics when guard is nil or New returns an error.
func Middleware(guard *core.Guard, opts ...Option) gin.HandlerFunc {
	h, err := newMiddleware("Middleware", guard, opts)
	if err != nil {
		panic(err.Error())
	}
	return h
}

// New is Middleware returning an error instead of panicking: the error of
// an invalid option, or of a rule in force naming a param the Extractor
// cannot supply (core.ParamSource). New panics when guard is nil.
func New(guard *core.Guard, opts ...Option) (gin.HandlerFunc, error) {
	return newMiddleware("New", guard, opts)
}

func newMiddleware(fn string, guard *core.Guard, opts []Option) (gin.HandlerFunc, error) {
	c := &config{}
	c.Init("sluicegin: "+fn, guard)
	for i, o := range opts {
		if o == nil {
			return nil, fmt.Errorf("sluicegin: %s: option %d is nil", fn, i)
		}
		if err := o.apply(c); err != nil {
			return nil, fmt.Errorf("sluicegin: %s: %w", fn, err)
		}
	}
	if c.Classify == nil {
		c.Classify = classify
	}
	if err := c.FinishErr(); err != nil {
		return nil, fmt.Errorf("sluicegin: %s: %w", fn, err)
	}
	if c.block == nil {
		c.block = DefaultBlockHandler
	}
	c.requests.New = func() any { return new(request) }
	return c.handle, nil
}

// classify is the default error classifier of gin requests: a status of
// 500 or more, or an error attached to a response below 400 (or to none).
// An error attached to a 4xx is a client's mistake answered, not a failure
// of the server: c.Bind attaches one to the 400 it writes for a body it
// cannot read.
func classify(status int, err error) bool {
	return status >= http.StatusInternalServerError || err != nil && status < http.StatusBadRequest
}

// WithRoutes makes the middleware tell the Guard the routes of r, the
// engine it is added to, at its first request (gin has no way to reach the
// engine from a request, and routes are registered after the middleware is
// added), so that the Guard warns about the rules that match none of them,
// then and at every change of its rules (core.Guard.CheckRoutes):
//
//	r.Use(sluicegin.New(guard, sluicegin.WithRoutes(r)))
//
// Routes registered after the first request are not told. With
// WithResource, which names requests otherwise, routes are not told.
func WithRoutes(r *gin.Engine) Option {
	return optionFunc(func(c *config) error {
		if r == nil {
			return errors.New("WithRoutes: nil *gin.Engine")
		}
		c.Routes = func() []httpadapter.Route {
			var routes []httpadapter.Route
			for _, ri := range r.Routes() {
				routes = append(routes, httpadapter.Route{Method: ri.Method, Path: ri.Path})
			}
			return routes
		}
		return nil
	})
}

// request is what Enter reads of a gin request, pooled: its params, the
// context they read route parameters and c.Get values from, and what its
// RateLimit fields are made with.
type request struct {
	params  extractors.Params
	ctx     ginContext
	proxied proxiedContext
	fields  httpadapter.QuotaFields
}

// ginContext is the extractors.PathParams of a gin request: its c.Params,
// and its c.Get values for extractors.WithContextParam.
type ginContext struct{ c *gin.Context }

// PathParam returns the value of the route parameter name as net/http and
// echo give it, so that one rules file's values and overrides apply
// through every adapter: a catch-all's ("/files/*path") without the
// leading '/' gin gives it, and, when gin routed by the escaped path
// (UseRawPath, UseEscapedPath), decoded from it as a path is decoded:
// gin then decodes it as a query, '+' as a space, or not at all
// (UnescapePathValues false).
func (g *ginContext) PathParam(name string) (string, bool) {
	v, ok := g.c.Params.Get(name)
	if !ok {
		return v, ok
	}
	full := g.c.FullPath()
	if s, found := escapedParam(full, g.c.Request.URL.EscapedPath(), name); found && strings.ContainsAny(s, "%+") {
		// The value gin gives when it routed by the escaped path; the same
		// decoded value otherwise, except where the decoded path has more
		// segments than the escaped one: gin's value is then the one.
		if u, err := url.QueryUnescape(s); v == s || err == nil && v == u {
			v = httpadapter.PathUnescape(s)
		}
	}
	if strings.HasPrefix(v, "/") && strings.HasSuffix(full, "/*"+name) {
		v = v[1:]
	}
	return v, ok
}

// escapedParam returns the text of the escaped path at the parameter name
// of the gin route template: ":name" the rest of its segment, after what
// precedes it in the template's; "*name", the rest of the path from the
// '/' before it, as gin gives it.
func escapedParam(template, escaped, name string) (string, bool) {
	path := escaped
	for {
		tseg, trest, tmore := strings.Cut(template, "/")
		pseg, prest, pmore := strings.Cut(path, "/")
		if start := len(escaped) - len(path) - 1; tseg == "*"+name && start >= 0 {
			return escaped[start:], true
		}
		if prefix, ok := strings.CutSuffix(tseg, ":"+name); ok && strings.HasPrefix(pseg, prefix) {
			return pseg[len(prefix):], true
		}
		if !tmore || !pmore {
			return "", false
		}
		template, path = trest, prest
	}
}

// ContextValue returns the value c.Get gives for key.
func (g *ginContext) ContextValue(key any) (any, bool) { return g.c.Get(key) }

// proxiedContext is a ginContext whose client IP is c.ClientIP()
// (WithFrameworkClientIP).
type proxiedContext struct{ ginContext }

// ClientIP returns c.ClientIP().
func (g *proxiedContext) ClientIP() string { return g.c.ClientIP() }

func (m *config) handle(c *gin.Context) {
	if m.skip != nil && m.skip(c) {
		c.Next()
		return
	}
	r := c.Request
	var resource string
	if m.resource != nil {
		resource = m.resource(c)
	} else {
		if m.Routes != nil && m.RoutesPending() {
			m.CheckRoutes(m.Routes())
		}
		resource = m.Extractor.HTTPResource(r.Method, c.FullPath())
	}
	n := int64(1)
	if m.cost != nil {
		n = m.cost(c)
	}
	rq := m.requests.Get().(*request)
	var path extractors.PathParams = &rq.ctx
	rq.ctx.c = c
	if m.clientIP {
		rq.proxied.c = c
		path = &rq.proxied
	}
	e, err := m.Enter(&rq.params, r, resource, n, path, &rq.fields.Quotas)
	rq.ctx.c, rq.proxied.c = nil, nil
	if err == nil && !m.NoQuota {
		m.SetQuotaHeaders(c.Writer.Header(), &rq.fields)
	}
	m.requests.Put(rq) // Enter and the fields are done with it
	if err != nil {
		switch b, gone := httpadapter.Rejection(r.Context(), err); {
		case b != nil:
			m.block(c, b)
		case gone:
			// The request's context ended while it waited for its turn:
			// the client is gone, and the middleware writes nothing.
		default:
			httpadapter.WriteEnterError(c.Writer)
		}
		c.Abort()
		return
	}
	body := httpadapter.WrapBody(r)
	finished := false
	defer func() {
		// r gets its body back for net/http, also after a panic (a recovery may answer).
		body.Unwrap(r)
		if !finished { // the chain panicked: count it, and let the panic go on
			e.Exit(body.ExitError(httpadapter.PanicExitError(r.Context())))
		}
	}()
	c.Next()
	finished = true
	var herr error
	if last := c.Errors.Last(); last != nil {
		herr = last
	}
	// A status set without a body is written after the chain: it counts as
	// written.
	written := c.Writer.Written() || c.Writer.Status() != http.StatusOK
	e.Exit(body.ExitError(m.HandlerExitError(r.Context(), written, c.Writer.Status(), herr)))
}
