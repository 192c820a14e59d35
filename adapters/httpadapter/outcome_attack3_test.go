package httpadapter

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core"
)

// TestFailureWrittenAfterTheClientLeftIsGone: a status counted as a
// failure, written after the request's context ended, is given to Exit as
// the caller having given up (a reverse proxy answers 502 to a client that
// hung up); a success written then, or a failure before, is counted as it
// is. So is a panic: a reverse proxy aborts with http.ErrAbortHandler when
// the client it streams to hangs up.
func TestFailureWrittenAfterTheClientLeftIsGone(t *testing.T) {
	var c Common
	g, err := core.New()
	require.NoError(t, err)
	defer g.Close()
	c.Init("pkg", g)
	require.NoError(t, c.FinishErr())
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	err = c.HandlerExitError(ended, true, 502, nil)
	assert.ErrorIs(t, err, errStatus)
	assert.ErrorIs(t, err, context.Canceled)
	assert.NoError(t, c.HandlerExitError(ended, true, 200, nil))
	assert.Equal(t, errStatus, c.HandlerExitError(context.Background(), true, 502, nil))

	assert.Equal(t, errPanic, PanicExitError(context.Background()))
	err = PanicExitError(ended)
	assert.ErrorIs(t, err, errPanic)
	assert.ErrorIs(t, err, context.Canceled, "a handler aborting for a client gone")
}
