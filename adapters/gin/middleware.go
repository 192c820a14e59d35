package sluicegin

import (
	"github.com/gin-gonic/gin"

	"github.com/sluicekit/sluice/adapters/internal/httpadapter"
	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/extractors"
)

// New returns a gin middleware that puts every request through guard:
//
//	r.Use(sluicegin.New(guard))
//
// The resource of a request is "METHOD TEMPLATE", TEMPLATE being the route
// that matched (c.FullPath()) with its parameters written as in net/http
// ("/items/:id" is "GET /items/{id}", "/files/*path" is
// "GET /files/{path...}"); requests that matched no route (404, 405) share
// extractors.Unmatched. Path params (path:NAME) are the route's parameters
// (c.Params).
//
// A blocked request gets DefaultBlockHandler's response (or
// WithBlockHandler's) and the chain is aborted. An admitted one runs the
// rest of the chain (c.Next) and is then counted as a success or an error
// (WithErrorClassifier); a panic in the chain is counted as an error and
// goes on, to gin.Recovery when it is installed before this middleware.
// A request whose context ends while it waits for a leaky-bucket turn (the
// client went away) is aborted without a response from the middleware.
//
// With WithRoutes, the Guard checks its rules against the engine's routes
// at the first request and at every change of its rules, and warns about
// the rules that match none (core.Guard.CheckRoutes).
//
// New panics when guard is nil.
func New(guard *core.Guard, opts ...Option) gin.HandlerFunc {
	var c config
	c.Init("sluicegin: New", guard)
	for _, o := range opts {
		if o != nil {
			o.apply(&c)
		}
	}
	c.Finish("sluicegin: New")
	if c.block == nil {
		c.block = DefaultBlockHandler
	}
	c.params.New = func() any { return new(extractors.HTTPRequestParams) }
	return c.handle
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
	if r == nil {
		panic("sluicegin: WithRoutes: nil *gin.Engine")
	}
	return optionFunc(func(c *config) {
		c.Routes = func() []httpadapter.Route {
			var routes []httpadapter.Route
			for _, ri := range r.Routes() {
				routes = append(routes, httpadapter.Route{Method: ri.Method, Path: ri.Path})
			}
			return routes
		}
	})
}

// pathParams is the extractors.PathParams of a gin request: its c.Params,
// addressed in place, so that handing them to the extractor costs nothing.
type pathParams gin.Params

// PathParam returns the value of the route parameter name.
func (p *pathParams) PathParam(name string) (string, bool) {
	return (*gin.Params)(p).Get(name)
}

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
	p := m.params.Get().(*extractors.HTTPRequestParams)
	var quotas *[]core.Quota // the RateLimit fields of an admitted response
	if m.Quota {
		quotas = new([]core.Quota)
	}
	e, err := m.Enter(p, r, resource, (*pathParams)(&c.Params), quotas)
	m.params.Put(p) // Enter is done with it
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
	finished := false
	defer func() {
		if !finished { // the chain panicked: count it, and let the panic go on
			e.Exit(httpadapter.ErrPanic)
		}
	}()
	if m.Quota {
		m.SetQuotaHeaders(c.Writer.Header(), *quotas)
	}
	c.Next()
	finished = true
	var herr error
	if last := c.Errors.Last(); last != nil {
		herr = last
	}
	e.Exit(m.ExitError(c.Writer.Status(), herr))
}
