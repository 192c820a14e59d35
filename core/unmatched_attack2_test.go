package core_test

import (
	"bytes"
	"log/slog"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/clock"
)

// lockedLog is a log buffer safe for the Guard's goroutines.
type lockedLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *lockedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *lockedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// TestUnmatchedAfterHuge sets WithUnmatchedAfter to the largest duration,
// an operator's "practically never": a rule that just started must not be
// reported unmatched. Failed before the deadline saturated: since+after
// overflowed to the past, and every rule was reported at once ("applied
// to no request for 0s").
func TestUnmatchedAfterHuge(t *testing.T) {
	var out lockedLog
	g, err := core.New(core.WithClock(clock.NewFake(time.Hour)), core.WithLogger(slog.New(slog.NewTextHandler(&out, nil))),
		core.WithUnmatchedAfter(math.MaxInt64),
		core.WithRules(core.Rule{Name: "r", Resource: "GET /x", Kind: core.KindFlow, Limit: 1}))
	require.NoError(t, err)
	require.NoError(t, g.Close()) // the watcher's last look, and the log, are done
	assert.NotContains(t, out.String(), "matched no request")
	assert.False(t, g.Snapshot().Rules[0].Unmatched)
}
