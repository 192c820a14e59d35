package httpadapter

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/extractors"
)

// TestRouteNames: a route of one method is named as its requests are, a
// route of every method by its template alone.
func TestRouteNames(t *testing.T) {
	x, err := extractors.New()
	require.NoError(t, err)
	got := RouteNames(x, []Route{
		{Method: "GET", Path: "/items/:id"},
		{Path: "/files/*path"},
		{Path: "example.com/files/{path...}"},
		{Method: "BREW", Path: "GET /pot/{id}"},
		{Method: "GET"}, // no template: not a route
	})
	assert.Equal(t, []string{"GET /items/{id}", "/files/{path...}", "/files/{path...}", "OTHER /pot/{id}"}, got)
}
