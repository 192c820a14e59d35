package httpadapter

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/sluicekit/sluice/extractors"
)

// Route is a route as a framework lists it: a method, "" for every
// method, and a template in the framework's syntax ("/items/:id",
// "GET /items/{id}").
type Route struct {
	Method, Path string
}

// RouteNames returns the resource names x gives the requests of routes: a
// route of every method is its template alone (see core.Guard.AddRoutes).
func RouteNames(x *extractors.Extractor, routes []Route) []string {
	names := make([]string, 0, len(routes))
	for _, r := range routes {
		switch {
		case r.Path == "":
		case r.Method == "":
			// The template alone: the resource of any method, less it.
			names = append(names, strings.TrimPrefix(x.HTTPResource(http.MethodGet, r.Path), http.MethodGet+" "))
		default:
			names = append(names, x.HTTPResource(r.Method, r.Path))
		}
	}
	return names
}

// RoutesPending reports whether the adapter has not had the Guard check
// its rules against the routes yet (CheckRoutes). It costs an atomic load.
func (c *Common) RoutesPending() bool { return !c.routed.Load() }

// CheckRoutes tells the Guard routes, named as the Extractor names
// requests (core.Guard.AddRoutes), and has it check its rules against all
// those it was told (core.Guard.CheckRoutes). Adapters call it at their
// first request, once the application registered its routes (gin and echo
// applications register them after adding the middleware; sluicehttp.Handle
// tells them one at a time), unless a resource function (WithResource)
// names their requests otherwise. Two first requests at once may both
// call it: the Guard adds a route once, and warns about a rule once.
func (c *Common) CheckRoutes(routes []Route) {
	c.Guard.AddRoutes(RouteNames(c.Extractor, routes)...)
	c.Guard.CheckRoutes()
	c.routed.Store(true)
}

// PathUnescape percent-decodes a route parameter's value taken from a
// request's escaped path as ServeMux decodes its wildcards' values,
// keeping it as is when it is not valid escaping: the value the path
// params of every HTTP adapter are.
func PathUnescape(s string) string {
	if strings.IndexByte(s, '%') < 0 {
		return s
	}
	if u, err := url.PathUnescape(s); err == nil {
		return u
	}
	return s
}
