package main

import (
	"bytes"
	"context"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestBadOnFailureRefused: a bad -on-failure is a usage error at once, as a
// bad -mode is, not accepted until a config with a limit meets Redis (and
// never refused without -redis).
func TestBadOnFailureRefused(t *testing.T) {
	noEnv := func(string) string { return "" }
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // were it to start, it stops at once
	var out bytes.Buffer
	assert.Equal(t, 2, run(ctx, []string{"-config", configDir(t), "-on-failure", "fail-open", "-listen", "127.0.0.1:0", "-http", ""}, noEnv, &out, nil))
	assert.Contains(t, out.String(), `-on-failure must be local, open or closed, got "fail-open"`)
	assert.Equal(t, 2, run(ctx, []string{"-config", configDir(t), "-listen", "127.0.0.1:0", "-http", ""}, func(k string) string {
		if k == "SLUICE_RLS_ON_FAILURE" {
			return "closd"
		}
		return ""
	}, io.Discard, nil))
}
