package sluicehttp_test

import (
	"net/http"
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
// every call to the healthy upstream, for every user. An upstream that
// fails still opens it.
func TestTransportRequestsNetHTTPRefusesAreTheCallers(t *testing.T) {
	u, g := guardedUpstream(t)
	c := client(t, g)
	for i := range 6 {
		_, err := call(c, u, "/x", "X-User-Name", "bob\r\nX-Admin: 1")
		require.Error(t, err, "call %d", i)
		require.NotErrorIs(t, err, core.ErrBlocked, "call %d: %v", i, err)
	}
	status, err := call(c, u, "/x", "X-User-Name", "alice")
	require.NoError(t, err, "another user's call")
	assert.Equal(t, http.StatusOK, status)
	failingUpstreamOpensTheBreaker(t, c, u)
}
