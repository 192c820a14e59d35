package sluicehttp_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTransportBodyOfTheWrongLengthIsTheCallers: uploads whose body is
// shorter or longer than the Content-Length the caller set (a file
// truncated or grown while it is sent) fail in net/http before any answer
// (a longer one may get the upstream's answer first), and are the caller's
// failure, not the upstream's: they open no breaker.
// Before, three of them opened the breaker on every call to the host.
func TestTransportBodyOfTheWrongLengthIsTheCallers(t *testing.T) {
	u, g := guardedUpstream(t)
	c := client(t, g)
	upload := func(size int, length int64) (int, error) {
		req, err := http.NewRequest(http.MethodPost, u.srv.URL+"/upload", io.NopCloser(strings.NewReader(strings.Repeat("x", size))))
		require.NoError(t, err)
		req.ContentLength = length
		return send(c, req)
	}
	for i := range 3 {
		_, err := upload(100, 1000)
		require.ErrorContains(t, err, "ContentLength=1000 with Body length 100", "upload %d", i)
		// The upstream reads its 1000 bytes and answers: net/http returns
		// that answer when it comes before its own check for more bytes
		// (a race of its write and read loops), else the length error.
		if status, err := upload(2000, 1000); err != nil {
			require.ErrorContains(t, err, "ContentLength=1000 with Body length 2000", "upload %d", i)
		} else {
			assert.Equal(t, http.StatusOK, status, "upload %d", i)
		}
	}
	st, _ := g.Stats("POST 127.0.0.1")
	assert.Zero(t, st.InFlight)
	status, err := upload(1000, 1000)
	require.NoError(t, err, "the breaker keeps no good upload back")
	assert.Equal(t, http.StatusOK, status)
}
