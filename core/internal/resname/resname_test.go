package resname_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core/internal/resname"
)

func TestIsHTTP(t *testing.T) {
	for _, c := range []struct {
		resource string
		http     bool
	}{
		{"GET /items/{id}", true},
		{"* /items", true},
		{"OTHER /items", true},
		{"/items/{id}", true},        // a template alone: every method
		{"/static/{path...}", true},  // one segment with no '.'
		{"/v1.items/list/all", true}, // three segments: not a gRPC method
		{"/pkg.Service", true},       // one segment: not a gRPC method
		{"/pkg.Service/Method", false},
		{"/pkg.Service/*", false},
		{"checkout", false},
		{"db query", false},
		{"LIST /items", false}, // not a method of resource names
		{"GET items", false},
	} {
		assert.Equal(t, c.http, resname.IsHTTP(c.resource), c.resource)
	}
}

// TestCanonical lists resources as rules write them and their
// canonical form, or why they are refused.
func TestCanonical(t *testing.T) {
	const methods = `method must be GET, HEAD, POST, PUT, PATCH, DELETE, CONNECT, OPTIONS, TRACE, OTHER or * (every method)`
	for _, tc := range []struct{ in, want, err string }{
		// Canonical already.
		{in: "GET /items/{id}", want: "GET /items/{id}"},
		{in: "GET /files/{path...}", want: "GET /files/{path...}"},
		{in: "GET /files/{*...}", want: "GET /files/{*...}"}, // echo's unnamed catch-all
		{in: "GET /{$}", want: "GET /{$}"},
		{in: "GET /items/*", want: "GET /items/*"},
		{in: "* /items/{id}", want: "* /items/{id}"},
		{in: "GET *", want: "GET *"},
		{in: "OTHER /x", want: "OTHER /x"},
		{in: "GET /v1/items:batch", want: "GET /v1/items:batch"}, // ':' inside a segment is literal
		{in: "/items/{id}", want: "/items/{id}"},                 // every method
		{in: "/pkg.Service/Method", want: "/pkg.Service/Method"}, // gRPC
		{in: "/pkg.Service/*", want: "/pkg.Service/*"},
		{in: "*", want: "*"},
		{in: "checkout", want: "checkout"}, // custom names are kept
		{in: "db query", want: "db query"},
		{in: "get user", want: "get user"},
		{in: "(unmatched)", want: "(unmatched)"},

		// Normalized.
		{in: "GET /items/:id", want: "GET /items/{id}"},
		{in: "GET /users/:uid/items/:id", want: "GET /users/{uid}/items/{id}"},
		{in: "GET /files/*path", want: "GET /files/{path...}"},
		{in: "/items/:id", want: "/items/{id}"},
		{in: "get /items/{id}", want: "GET /items/{id}"},
		{in: "Post /items", want: "POST /items"},
		{in: "GET  /items/{id}", want: "GET /items/{id}"},
		{in: "  GET /items/{id} ", want: "GET /items/{id}"},
		{in: " /items/{id}", want: "/items/{id}"},

		// Refused.
		{in: "GET /items/[a-", err: `uses the glob syntax "[", which sluice does not support (a glob has only '*'), got "GET /items/[a-"; use '*', which matches any run of characters, '/' included`},
		{in: "GET /items/?", err: `uses the glob syntax "?", which sluice does not support (a glob has only '*'), got "GET /items/?"; use '*', which matches any run of characters, '/' included`},
		{in: "GET /items/**", err: `uses the glob syntax "**", which sluice does not support (a glob has only '*'), got "GET /items/**"; write "GET /items/*"`},
		{in: "/a/**/b", err: `uses the glob syntax "**", which sluice does not support (a glob has only '*'), got "/a/**/b"; write "/a/*/b"`},
		{in: "FETCH /items", err: methods + `, got "FETCH" in "FETCH /items"`},
		{in: "GET items/{id}", err: `template must start with '/', got "GET items/{id}"; write "GET /items/{id}"`},
		{in: "GET /items /{id}", err: `template must not contain spaces, got "GET /items /{id}"; write "GET /items/{id}"`},
		{in: "/items/{id} GET", err: `template must not contain spaces, and a method goes first, got "/items/{id} GET"; write e.g. "GET /items/{id}"`},
		{in: "GET /items/{a,b}", err: `wildcard must be a whole segment {name}, a last {name...} or a last {$}, got "{a,b}" in "GET /items/{a,b}"`},
		{in: "GET /items/{id", err: `wildcard must be a whole segment {name}, a last {name...} or a last {$}, got "{id" in "GET /items/{id"`},
		{in: "GET /x{id}", err: `wildcard must be a whole segment {name}, a last {name...} or a last {$}, got "x{id}" in "GET /x{id}"`},
		{in: "GET /{path...}/x", err: `wildcard must be a whole segment {name}, a last {name...} or a last {$}, got "{path...}" in "GET /{path...}/x"`},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := resname.Canonical(tc.in)
			if tc.err != "" {
				assert.EqualError(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
			again, err := resname.Canonical(got)
			require.NoError(t, err)
			assert.Equal(t, got, again, "canonical forms are fixed points")
		})
	}
}
