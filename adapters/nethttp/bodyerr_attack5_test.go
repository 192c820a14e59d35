package sluicehttp_test

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	sluicehttp "github.com/sluicekit/sluice/adapters/nethttp"
	"github.com/sluicekit/sluice/core/throttle"
)

// failingBody is a request body whose reading fails after n bytes: the
// caller's own file or pipe breaking.
type failingBody struct{ n int }

var errLocalDisk = errors.New("read /data/upload: input/output error")

func (b *failingBody) Read(p []byte) (int, error) {
	if b.n > 0 {
		n := copy(p, strings.Repeat("x", min(len(p), b.n)))
		b.n -= n
		return n, nil
	}
	return 0, errLocalDisk
}

// TestTransportRequestBodyErrorsAreTheCallers: uploads whose request body
// fails to read (the caller's disk) fail with that error, and are no
// failure of the upstream: they open no breaker and the throttle does not
// count them. Before, two of them made the throttle reject 67% of the
// uploads to a healthy upstream ("the upstream rejects calls"), and three
// opened the breaker on every call to the host. An upstream that fails
// still opens it.
func TestTransportRequestBodyErrorsAreTheCallers(t *testing.T) {
	u, g := guardedUpstream(t)
	th, err := throttle.New(g.Clock())
	require.NoError(t, err)
	c := client(t, g, sluicehttp.WithThrottle(th))
	upload := func(body io.Reader) (int, error) {
		req, err := http.NewRequest(http.MethodPost, u.srv.URL+"/upload", body)
		require.NoError(t, err)
		req.ContentLength = 1000
		return send(c, req)
	}
	for i := range 6 {
		body := io.NopCloser(&failingBody{n: 100})
		_, err := upload(body)
		require.ErrorIs(t, err, errLocalDisk, "upload %d", i)
	}
	st, _ := g.Stats("POST 127.0.0.1")
	assert.Zero(t, st.InFlight)
	status, err := upload(strings.NewReader(strings.Repeat("x", 1000)))
	require.NoError(t, err, "neither the breaker nor the throttle keeps a good upload back")
	assert.Equal(t, http.StatusOK, status)
	failingUpstreamOpensTheBreaker(t, c, u)
}
