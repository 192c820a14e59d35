package extractors_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/extractors"
)

type ctxKey struct{}

type stringer struct{}

func (stringer) String() string { return "from String" }

// TestContextParam: a WithContextParam param reads the request's context
// value under its key, as a string, strings, a Stringer or any value;
// its name is a custom param of both protocols.
func TestContextParam(t *testing.T) {
	x, err := extractors.New(extractors.WithContextParam("user", ctxKey{}))
	require.NoError(t, err)
	for _, tt := range []struct {
		v    any
		want []string
	}{
		{"alice", []string{"alice"}},
		{[]string{"a", "", "b"}, []string{"a", "b"}},
		{stringer{}, []string{"from String"}},
		{42, []string{"42"}},
		{nil, nil},
		{"", nil},
	} {
		r := httptest.NewRequest("GET", "/", nil)
		r = r.WithContext(context.WithValue(r.Context(), ctxKey{}, tt.v))
		assert.Equal(t, tt.want, values(x.HTTPParams(r, nil), "user"), "%#v", tt.v)
	}
	assert.NoError(t, x.HTTPSource().CheckParam("user"))
	assert.NoError(t, x.GRPCSource().CheckParam("user"))
	assert.NoError(t, x.CheckParam("user"))
	assert.ErrorContains(t, x.HTTPSource().CheckParam("tenant"), "(registered: user)")

	for _, tt := range []struct {
		opts []extractors.Option
		want string
	}{
		{[]extractors.Option{extractors.WithContextParam("ip", ctxKey{})}, `"ip" is a built-in param`},
		{[]extractors.Option{extractors.WithContextParam("user", nil)}, "the key must be comparable and not nil"},
		{[]extractors.Option{extractors.WithContextParam("user", []string{})}, "the key must be comparable and not nil, got []string"},
		{[]extractors.Option{extractors.WithContextParam("user", ctxKey{}), extractors.WithContextParam("user", "k")}, `"user" registered twice`},
		{[]extractors.Option{extractors.WithContextParam("user", ctxKey{}), extractors.WithHTTPParam("user", func(*http.Request) []string { return nil })}, `WithHTTPParam: "user" registered twice`},
		{[]extractors.Option{extractors.WithGRPCParam("user", func(context.Context, string) []string { return nil }), extractors.WithContextParam("user", ctxKey{})}, `WithContextParam: "user" registered twice`},
	} {
		_, err := extractors.New(tt.opts...)
		assert.ErrorContains(t, err, tt.want)
	}
}
