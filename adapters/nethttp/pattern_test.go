package sluicehttp

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestPatternValue(t *testing.T) {
	for _, tt := range []struct {
		pattern, path, name string
		want                string
		ok                  bool
	}{
		{"GET /items/{id}", "/items/42", "id", "42", true},
		{"/items/{id}", "/items/42", "id", "42", true},
		{"GET example.com/items/{id}", "/items/42", "id", "42", true},
		{"GET  /items/{id}/parts/{part}", "/items/42/parts/7", "part", "7", true},
		{"GET /items/{id}/parts/{part}", "/items/42/parts/7", "id", "42", true},
		{"GET /items/{id}", "/items/caf%C3%A9", "id", "café", true},
		{"GET /items/{id}", "/items/a%2Fb", "id", "a/b", true},
		{"GET /items/{id}", "/items/bad%zz", "id", "bad%zz", true},
		{"GET /files/{path...}", "/files/a/b%20c/d", "path", "a/b c/d", true},
		{"GET /files/{path...}", "/files/", "path", "", true},
		{"GET /items/{id}/{$}", "/items/42/", "id", "42", true},
		{"GET /items/{id}", "/items/42", "other", "", false},
		{"GET /files/{path...}", "/files/x", "id", "", false},
		{"GET /static/", "/static/x", "static", "", false},
		{"", "/x", "x", "", false},
		{"GET", "/x", "x", "", false},
	} {
		got, ok := patternValue(tt.pattern, tt.path, tt.name)
		assert.Equal(t, tt.ok, ok, "%q %q %q", tt.pattern, tt.path, tt.name)
		assert.Equal(t, tt.want, got, "%q %q %q", tt.pattern, tt.path, tt.name)
	}
}

// TestPatternValueAgreesWithServeMux checks patternValue against the values
// the ServeMux itself gives r.PathValue.
func TestPatternValueAgreesWithServeMux(t *testing.T) {
	patterns := []string{"GET /items/{id}", "GET /a/{x}/b/{y}", "GET /files/{rest...}", "GET example.com/h/{id}"}
	compared := 0
	paths := []string{"/items/42", "/items/caf%C3%A9", "/items/a%2Fb", "/a/1/b/2", "/a/%31/b/%2F", "/files/x/y%20z", "/h/7"}
	for _, p := range patterns {
		mux := http.NewServeMux()
		var got map[string]string
		mux.HandleFunc(p, func(w http.ResponseWriter, r *http.Request) {
			got = map[string]string{}
			for _, name := range []string{"id", "x", "y", "rest"} {
				got[name] = r.PathValue(name)
			}
		})
		for _, path := range paths {
			r := httptest.NewRequest(http.MethodGet, "http://example.com"+path, nil)
			_, pattern := mux.Handler(r)
			if pattern == "" {
				continue
			}
			got = nil
			mux.ServeHTTP(httptest.NewRecorder(), r)
			for name, want := range got {
				v, _ := patternValue(pattern, r.URL.EscapedPath(), name)
				assert.Equal(t, want, v, "%s %s %s", p, path, name)
				compared++
			}
		}
	}
	assert.GreaterOrEqual(t, compared, 20)
}

func TestPatternMethod(t *testing.T) {
	for pattern, want := range map[string]string{
		"GET /x":            "GET",
		"GET\texample.com/": "GET",
		"POST  /x/{id}":     "POST",
		"example.com/x":     "HEAD",
		"/x":                "HEAD",
		"":                  "HEAD",
		"/a b":              "HEAD",
		"GET example.com":   "HEAD",
		"GET":               "HEAD",
		" /x":               "HEAD",
	} {
		assert.Equal(t, want, patternMethod(pattern, "HEAD"), pattern)
	}
}
