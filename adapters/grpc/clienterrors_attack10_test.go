package sluicegrpc_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/clock"
)

// TestClientMistakesOpenNoBreaker: a client that sends calls its server
// answers NotFound (a request for what is not there: on HTTP, a 404,
// which the HTTP adapters never count as a failure) must not open an
// error-ratio breaker for every other client. On a748097 the default
// classifier counted every non-OK code: 10 such calls opened it, and the
// next call of another user gets Unavailable, for OpenFor, again and
// again while the client repeats (a denial of service by bad requests,
// Unauthenticated and InvalidArgument alike).
func TestClientMistakesOpenNoBreaker(t *testing.T) {
	fc := clock.NewFake(time.Hour)
	g := newGuard(t, fc, core.Rule{Name: "b", Resource: sayHello, Kind: core.KindBreaker, Strategy: "error-ratio", Threshold: 0.5, MinRequests: 10})
	_, c, _ := serve(t, guarded(g)...)
	for range 10 {
		require.Equal(t, codes.NotFound, status.Code(hello(ctxT(t), c, "missing")))
	}
	assert.NoError(t, hello(ctxT(t), c, "alice"), "another user's call")
}
