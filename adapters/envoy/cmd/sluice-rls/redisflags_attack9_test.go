package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRedisFlagsWithoutRedisMessage: the refusal of settings that apply
// only with -redis names the variable a deployment set
// ($SLUICE_RLS_ON_FAILURE) and the one it lacks ($SLUICE_RLS_REDIS), and
// is the same at every start: with several such settings it names the
// first in -help's order. Before, it named only the flags, and which of
// them varied from one start to the next.
func TestRedisFlagsWithoutRedisMessage(t *testing.T) {
	getenv := func(name string) string {
		if name == "SLUICE_RLS_ON_FAILURE" {
			return "closed"
		}
		return ""
	}
	var first string
	for i := range 30 {
		_, err := parse([]string{"-config", "c", "-redis-timeout", "1s", "-mode", "approximate"}, getenv, &bytes.Buffer{})
		require.Error(t, err)
		if i == 0 {
			first = err.Error()
			continue
		}
		require.Equal(t, first, err.Error(), "start %d", i)
	}
	assert.Contains(t, first, "-mode ($SLUICE_RLS_MODE)")
	assert.Contains(t, first, "$SLUICE_RLS_REDIS")
	_, err := parse([]string{"-config", "c"}, getenv, &bytes.Buffer{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "$SLUICE_RLS_ON_FAILURE")
}
