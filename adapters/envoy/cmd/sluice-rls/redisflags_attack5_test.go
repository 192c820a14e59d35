package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRedisFlagsWithoutRedisRefused: -mode, -on-failure and
// -redis-timeout apply only with -redis; given without it (a flag or its
// environment variable: a -redis left out of a deployment), sluice-rls
// refuses to start, rather than count in each instance's memory, where N
// instances admit N times a limit meant for all of them. Before, they were
// taken and ignored. With -redis, or left to their defaults, they are
// taken.
func TestRedisFlagsWithoutRedisRefused(t *testing.T) {
	env := func(k, v string) func(string) string {
		return func(name string) string {
			if name == k {
				return v
			}
			return ""
		}
	}
	noEnv := env("", "")
	for _, tc := range []struct {
		args []string
		env  func(string) string
		flag string
	}{
		{[]string{"-mode", "approximate"}, noEnv, "-mode"},
		{[]string{"-on-failure", "closed"}, noEnv, "-on-failure"},
		{[]string{"-redis-timeout", "1s"}, noEnv, "-redis-timeout"},
		{nil, env("SLUICE_RLS_MODE", "approximate"), "-mode"},
	} {
		var out bytes.Buffer
		_, err := parse(append([]string{"-config", "c"}, tc.args...), tc.env, &out)
		require.Error(t, err, "%v", tc.args)
		assert.Contains(t, err.Error(), tc.flag)
		assert.Contains(t, err.Error(), "-redis")
	}
	for _, args := range [][]string{{"-config", "c"}, {"-config", "c", "-redis", "h:6379", "-mode", "approximate", "-on-failure", "open", "-redis-timeout", "1s"}} {
		var out bytes.Buffer
		_, err := parse(args, noEnv, &out)
		assert.NoError(t, err, "%v", args)
	}
}
