package rulesfile_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core/rulesfile"
)

// Stats counts the loads applied and refused, and when they were.
func TestWatcherStats(t *testing.T) {
	before := time.Now()
	x := newWatched(t, "rules.yaml", "rules:\n  - {resource: a, kind: flow, limit: 1}\n")
	var s rulesfile.ReloadStats = x.w.Stats()
	assert.Equal(t, x.path, s.Path)
	assert.Equal(t, int64(1), s.Reloads, "NewWatcher's load")
	assert.Zero(t, s.Failures)
	assert.False(t, s.Failing)
	assert.False(t, s.LastSuccess.Before(before))
	assert.False(t, s.LastSuccess.After(time.Now()))
	assert.True(t, s.LastFailure.IsZero())

	x.write("rules:\n  - {resource: a, kind: flow, limit: ten}\n")
	require.Error(t, x.w.Reload())
	require.Error(t, x.w.Reload())
	s = x.w.Stats()
	assert.Equal(t, int64(1), s.Reloads)
	assert.Equal(t, int64(2), s.Failures)
	assert.True(t, s.Failing)
	assert.False(t, s.LastFailure.Before(s.LastSuccess))

	x.write("rules:\n  - {resource: a, kind: flow, limit: 2}\n")
	require.NoError(t, x.w.Reload())
	s = x.w.Stats()
	assert.Equal(t, int64(2), s.Reloads)
	assert.Equal(t, int64(2), s.Failures)
	assert.False(t, s.Failing)
	assert.GreaterOrEqual(t, s.LastDuration, time.Duration(0))
}
