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

// TestHTTPRequestParamsReset reuses one HTTPRequestParams for several
// requests: each Reset forgets the earlier request entirely (its values,
// the cursor that stood past its last value, its custom values), and the
// zero value and a value Reset with a nil Extractor have no values.
func TestHTTPRequestParamsReset(t *testing.T) {
	calls := 0
	x, err := extractors.New(extractors.WithHTTPParam("tenant", func(r *http.Request) []string {
		calls++
		return []string{r.Header.Get("X-Tenant")}
	}))
	require.NoError(t, err)

	var p extractors.HTTPRequestParams
	var _ core.Params = &p
	assert.Empty(t, values(&p, "header:X-User-ID"), "zero value")

	a := newRequest(t, "GET", "/", "203.0.113.1:1", "X-User-ID", "alice", "X-Tenant", "acme")
	b := newRequest(t, "GET", "/", "203.0.113.2:1", "X-User-ID", "bob, carol", "X-Tenant", "initech")
	c := newRequest(t, "GET", "/", "203.0.113.3:1")

	p.Reset(x, a, nil)
	assert.Equal(t, []string{"alice"}, values(&p, "header:X-User-ID"))
	assert.Equal(t, []string{"acme"}, values(&p, "tenant"))
	assert.Equal(t, 1, calls)

	// The cursor stood past alice, the last value of a: b's second value
	// must still be read.
	p.Reset(x, b, nil)
	assert.Equal(t, []string{"bob", "carol"}, values(&p, "header:X-User-ID"))
	assert.Equal(t, []string{"initech"}, values(&p, "tenant"), "custom values of the earlier request kept")
	assert.Equal(t, 2, calls)
	assert.Equal(t, []string{"203.0.113.2"}, values(&p, "ip"))

	p.Reset(x, c, nil)
	assert.Empty(t, values(&p, "header:X-User-ID"))
	assert.Equal(t, []string{"203.0.113.3"}, values(&p, "peer"))

	p.Reset(nil, nil, nil)
	assert.Empty(t, values(&p, "header:X-User-ID"), "Reset(nil, nil, nil)")
	assert.Empty(t, values(&p, "tenant"))
}

// TestHTTPRequestParamsPath: the path params of Reset's PathParams, or of
// r.PathValue when it is nil.
func TestHTTPRequestParamsPath(t *testing.T) {
	x, err := extractors.New()
	require.NoError(t, err)
	r := pathValueRequest(t, "id", "7")
	var p extractors.HTTPRequestParams
	p.Reset(x, r, nil)
	assert.Equal(t, []string{"7"}, values(&p, "path:id"))
	p.Reset(x, r, pathMap{"id": "8"})
	assert.Equal(t, []string{"8"}, values(&p, "path:id"))
}

// TestRequestParamsAllocs: an HTTPRequestParams or GRPCCallParams held by
// the caller and Reset per request reads a header (metadata) param without
// allocating (over grpc-go, the copy it makes of a metadata value list
// aside: adapters/grpc tests that).
func TestRequestParamsAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under the race detector")
	}
	x, err := extractors.New()
	require.NoError(t, err)
	r := newRequest(t, "GET", "/", "203.0.113.1:1", "X-User-ID", "alice, bob")
	hp := new(extractors.HTTPRequestParams)
	assert.Zero(t, testing.AllocsPerRun(100, func() {
		hp.Reset(x, r, nil)
		if count(hp, "header:X-User-ID") != 2 {
			t.Fatal("values")
		}
	}), "HTTP")

	gp := new(extractors.GRPCCallParams)
	call := &fakeCall{in: map[string][]string{"x-user-id": {"alice, bob"}}}
	ctx := context.Background()
	assert.Zero(t, testing.AllocsPerRun(100, func() {
		gp.Reset(x, call, ctx, "/a.B/C")
		if count(gp, "metadata:x-user-id") != 2 {
			t.Fatal("values")
		}
	}), "gRPC")
}
