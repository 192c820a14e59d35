package resname_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

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
