package extractors_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/extractors"
)

// TestParamsResetHTTP reuses one Params for several requests: each
// ResetHTTP forgets the earlier request entirely (its values, the cursor
// that stood past its last value, its custom values), and the zero value
// and a value reset with a nil Extractor have no values.
func TestParamsResetHTTP(t *testing.T) {
	calls := 0
	x, err := extractors.New(extractors.WithHTTPParam("tenant", func(r *http.Request) []string {
		calls++
		return []string{r.Header.Get("X-Tenant")}
	}))
	require.NoError(t, err)

	var p extractors.Params
	var _ core.Params = &p
	assert.Empty(t, values(&p, "header:X-User-ID"), "zero value")

	a := newRequest(t, "GET", "/", "203.0.113.1:1", "X-User-ID", "alice", "X-Tenant", "acme")
	b := newRequest(t, "GET", "/", "203.0.113.2:1", "X-User-ID", "bob, carol", "X-Tenant", "initech")
	c := newRequest(t, "GET", "/", "203.0.113.3:1")

	p.ResetHTTP(x, a, nil)
	assert.Equal(t, []string{"alice"}, values(&p, "header:X-User-ID"))
	assert.Equal(t, []string{"acme"}, values(&p, "tenant"))
	assert.Equal(t, 1, calls)

	// The cursor stood past alice, the last value of a: b's second value
	// must still be read.
	p.ResetHTTP(x, b, nil)
	assert.Equal(t, []string{"bob", "carol"}, values(&p, "header:X-User-ID"))
	assert.Equal(t, []string{"initech"}, values(&p, "tenant"), "custom values of the earlier request kept")
	assert.Equal(t, 2, calls)
	assert.Equal(t, []string{"203.0.113.2"}, values(&p, "ip"))

	p.ResetHTTP(x, c, nil)
	assert.Empty(t, values(&p, "header:X-User-ID"))
	assert.Equal(t, []string{"203.0.113.3"}, values(&p, "peer"))

	p.ResetHTTP(nil, nil, nil)
	assert.Empty(t, values(&p, "header:X-User-ID"), "ResetHTTP(nil, nil, nil)")
	assert.Empty(t, values(&p, "tenant"))
}

// TestParamsPath: the path params of ResetHTTP's PathParams, or of
// r.PathValue when it is nil.
func TestParamsPath(t *testing.T) {
	x, err := extractors.New()
	require.NoError(t, err)
	r := pathValueRequest(t, "id", "7")
	var p extractors.Params
	p.ResetHTTP(x, r, nil)
	assert.Equal(t, []string{"7"}, values(&p, "path:id"))
	p.ResetHTTP(x, r, pathMap{"id": "8"})
	assert.Equal(t, []string{"8"}, values(&p, "path:id"))
}

// TestRequestParamsAllocs: a Params held by
// the caller and reset per request reads a header (metadata) param without
// allocating (over grpc-go, the copy it makes of a metadata value list
// aside: adapters/grpc tests that).
func TestRequestParamsAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under the race detector")
	}
	x, err := extractors.New()
	require.NoError(t, err)
	r := newRequest(t, "GET", "/", "203.0.113.1:1", "X-User-ID", "alice, bob")
	hp := new(extractors.Params)
	assert.Zero(t, testing.AllocsPerRun(100, func() {
		hp.ResetHTTP(x, r, nil)
		if count(hp, "header:X-User-ID") != 2 {
			t.Fatal("values")
		}
	}), "HTTP")

	gp := new(extractors.Params)
	call := &fakeCall{in: map[string][]string{"x-user-id": {"alice, bob"}}}
	ctx := context.Background()
	assert.Zero(t, testing.AllocsPerRun(100, func() {
		gp.ResetGRPC(x, call, ctx, "/a.B/C")
		if count(gp, "metadata:x-user-id") != 2 {
			t.Fatal("values")
		}
	}), "gRPC")
}

// TestParamsAcrossKinds: one Params reset for an HTTP request, then a gRPC
// call, then a request again, reads each alone: nothing of the other kind
// stays.
func TestParamsAcrossKinds(t *testing.T) {
	x, err := extractors.New()
	require.NoError(t, err)
	r := newRequest(t, "GET", "/", "203.0.113.1:1", "X-User-ID", "alice")
	call := &fakeCall{in: map[string][]string{"x-user-id": {"bob"}}}
	var p extractors.Params
	p.ResetHTTP(x, r, nil)
	assert.Equal(t, []string{"alice"}, values(&p, "header:X-User-ID"))
	assert.Equal(t, []string{"GET"}, values(&p, "method"))
	p.ResetGRPC(x, call, context.Background(), "/a.B/C")
	assert.Equal(t, []string{"bob"}, values(&p, "metadata:x-user-id"))
	assert.Equal(t, []string{"/a.B/C"}, values(&p, "method"))
	p.ResetHTTP(x, r, nil)
	assert.Equal(t, []string{"alice"}, values(&p, "header:X-User-ID"))
	p.ResetGRPC(x, call, context.Background(), "/a.B/C")
	p.ResetHTTP(x, nil, nil)
	assert.Empty(t, values(&p, "method"), "no request, and the call is forgotten")
	p.ResetHTTP(x, r, nil)
	p.ResetGRPC(x, nil, nil, "")
	assert.Empty(t, values(&p, "method"), "no call, and the request is forgotten")
}
