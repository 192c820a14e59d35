package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRunShowsPassedAndBlocked(t *testing.T) {
	var out strings.Builder
	require.NoError(t, run(&out, "", 1500*time.Millisecond))
	s := out.String()
	assert.Contains(t, s, "2 rules loaded")
	assert.Contains(t, s, "GET /items/{id}\tpassed")
	assert.Contains(t, s, "GET /items/{id}\tblocked by items-rate")
	assert.Contains(t, s, "GET /slow\tblocked by slow-inflight")
}

func TestRunReportsBadRulesFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rules.json")
	require.NoError(t, os.WriteFile(path, []byte(`{"rules":[{"resource":"x","kind":"flow","limit":-5}]}`), 0o600))
	err := run(&strings.Builder{}, path, time.Second)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "limit must be >= 0, got -5")
	assert.Contains(t, err.Error(), path)
}
