package sluicehttp_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core"
)

// TestTransportRequestsNetHTTPRefusesAreTheCallers: a service calls its
// upstream through the Transport, under an error-count breaker, putting
// what its users send in a header; one user's value holds a line break,
// which net/http refuses to send ("invalid header field value"). The
// upstream never saw the call: before, 3 such calls opened the breaker on
// every call to the healthy upstream, for every user; so did a webhook
// URL of scheme ftp to the upstream's host. An upstream that fails still
// opens it.
func TestTransportRequestsNetHTTPRefusesAreTheCallers(t *testing.T) {
	u, g := guardedUpstream(t)
	c := client(t, g)
	for i := range 6 {
		_, err := call(c, u, "/x", "X-User-Name", "bob\r\nX-Admin: 1")
		require.Error(t, err, "call %d", i)
		require.NotErrorIs(t, err, core.ErrBlocked, "call %d: %v", i, err)
	}
	// A webhook URL a user gave, of a scheme net/http does not send, to the
	// upstream's host.
	for i := range 6 {
		req, err := http.NewRequest(http.MethodPost, "ftp"+strings.TrimPrefix(u.srv.URL, "http")+"/hook", nil)
		require.NoError(t, err)
		_, err = send(c, req)
		require.ErrorContains(t, err, "unsupported protocol scheme", "call %d", i)
	}
	status, err := call(c, u, "/x", "X-User-Name", "alice")
	require.NoError(t, err, "another user's call")
	assert.Equal(t, http.StatusOK, status)
	failingUpstreamOpensTheBreaker(t, c, u)
}
