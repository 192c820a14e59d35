package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core/rulesfile"
)

// sluicecheck builds the command and returns the path of its binary.
func sluicecheck(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "sluicecheck")
	out, err := exec.Command("go", buildArgs(bin)...).CombinedOutput()
	require.NoError(t, err, "%s", out)
	return bin
}

// result is what a run of the command printed, and its exit status.
type result struct {
	stdout, stderr string
	code           int
}

func runCmd(t *testing.T, bin string, args ...string) result {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		require.NoError(t, err)
	}
	return result{stdout.String(), stderr.String(), cmd.ProcessState.ExitCode()}
}

// TestSluicecheck builds the command and runs it on rules files on disk:
// the repository's own, valid and invalid testdata, a missing file, and
// without arguments.
func TestSluicecheck(t *testing.T) {
	bin := sluicecheck(t)
	testdata := filepath.Join("..", "..", "rulesfile", "testdata")
	examples := filepath.Join("..", "..", "..", "examples")

	t.Run("valid", func(t *testing.T) {
		files := []string{
			filepath.Join(testdata, "rules.yaml"),
			filepath.Join(testdata, "rules.json"),
			filepath.Join(testdata, "rules-breaker.yaml"),
			filepath.Join(testdata, "rules-none.yaml"),
			filepath.Join(examples, "internal", "exampleapp", "rules.yaml"),
		}
		r := runCmd(t, bin, files...)
		assert.Equal(t, 0, r.code)
		assert.Empty(t, r.stderr)
		assert.Equal(t, files[0]+": 3 rules: 1 flow, 1 concurrency, 1 hotspot\n"+
			files[1]+": 3 rules: 1 flow, 1 concurrency, 1 hotspot\n"+
			files[2]+": 2 rules: 2 breaker\n"+
			files[3]+": 0 rules (the file removes every rule)\n"+
			files[4]+": 5 rules: 2 flow, 1 concurrency, 1 hotspot, 1 breaker\n", r.stdout)
	})

	t.Run("invalid", func(t *testing.T) {
		good := filepath.Join(testdata, "rules.yaml")
		negative := filepath.Join(testdata, "invalid-rules-negative-limit.yaml")
		bare := filepath.Join(testdata, "invalid-rules-bare.yaml")
		kind := filepath.Join(testdata, "invalid-rules-kind.json")
		missing := filepath.Join(t.TempDir(), "missing.yaml")
		r := runCmd(t, bin, negative, good, bare, kind, missing)
		assert.Equal(t, 1, r.code)
		assert.Equal(t, good+": 3 rules: 1 flow, 1 concurrency, 1 hotspot\n", r.stdout, "valid files are still reported")
		assert.Equal(t, negative+`:6: rules[0] (per-user): limit must be >= 0, got -5
`+negative+`: invalid: 1 problem
`+bare+`:2: rules must be a list of rules, got null (the file may have been cut short); a rules file with no rules says so with "rules: []"
`+bare+`: invalid: 1 problem
`+kind+`:1: rules[0] (a): kind must be flow, concurrency, hotspot, breaker, adaptive or system, got "bulkhead"
`+kind+`: invalid: 1 problem
`+missing+`: open: no such file or directory
`, r.stderr)
	})

	t.Run("every problem", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "rules.yaml")
		require.NoError(t, os.WriteFile(path, []byte(`rules:
  - name: items
    resource: GET /items
    kind: flow
    limit: 10
    windw: 1s
  - name: per-user
    resource: GET /items/{id}
    kind: hotspot
    param: header:X-User-ID
    limit: 5
    burst: -1
    overrides:
      vip: many
`), 0o600))
		r := runCmd(t, bin, path)
		assert.Equal(t, 1, r.code)
		assert.Empty(t, r.stdout)
		assert.Equal(t, path+`:6: rules[0] (items): unknown field "windw" (did you mean "window"?)
`+path+`:12: rules[1] (per-user): burst must be >= 0, got -1
`+path+`:14: rules[1] (per-user): overrides value for "vip" must be an integer, got "many"
`+path+`: invalid: 3 problems
`, r.stderr)
	})

	t.Run("params", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "rules.yaml")
		require.NoError(t, os.WriteFile(path, []byte(`rules:
  - {name: per-user, resource: "GET /items/{id}", kind: hotspot, param: user, limit: 5}
  - {name: per-tenant, resource: "GET /items/{id}", kind: hotspot, param: tenantt, limit: 5}
  - {name: per-ip, resource: "GET /items/{id}", kind: hotspot, param: ip, limit: 5}
`), 0o600))
		r := runCmd(t, bin, "-params", "user, tenant", path)
		assert.Equal(t, 1, r.code)
		assert.Equal(t, path+`: rules[1] (per-tenant): param "tenantt" is not among the custom params given with -params (user, tenant)
`+path+`: invalid: 1 problem
`, r.stderr)
		r = runCmd(t, bin, path)
		assert.Equal(t, 0, r.code, "without -params, any custom param")
	})

	t.Run("stores", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "rules.yaml")
		require.NoError(t, os.WriteFile(path, []byte(`rules:
  - {name: shared, resource: "GET /a", kind: flow, limit: 5, window: 1s, store: redis}
  - {name: typo, resource: "GET /b", kind: flow, limit: 5, window: 1s, store: redsi}
`), 0o600))
		r := runCmd(t, bin, "-stores", "redis, cache", path)
		assert.Equal(t, 1, r.code)
		assert.Equal(t, path+`: rules[1] (typo): store "redsi" is not among the stores given with -stores (redis, cache)
`+path+`: invalid: 1 problem
`, r.stderr)

		good := filepath.Join("..", "..", "rulesfile", "testdata", "rules-store.yaml")
		r = runCmd(t, bin, "-stores", "redis", good)
		assert.Equal(t, 0, r.code, r.stderr)
		assert.Equal(t, good+": 2 rules: 1 flow, 1 hotspot; stores: redis\n", r.stdout)
		r = runCmd(t, bin, good)
		assert.Equal(t, 0, r.code, r.stderr)
		assert.Equal(t, good+": 2 rules: 1 flow, 1 hotspot; stores: redis (not checked: give the service's with -stores)\n", r.stdout)
	})

	t.Run("flags after files", func(t *testing.T) {
		good := filepath.Join("..", "..", "rulesfile", "testdata", "rules-store.yaml")
		r := runCmd(t, bin, good, "-stores", "redis")
		assert.Equal(t, 0, r.code, r.stderr)
		assert.Equal(t, good+": 2 rules: 1 flow, 1 hotspot; stores: redis\n", r.stdout)
		r = runCmd(t, bin, good, "-stores", "cache", good)
		assert.Equal(t, 1, r.code)
		assert.Empty(t, r.stdout)
		assert.Equal(t, 4, strings.Count(r.stderr, `store "redis" is not among the stores given with -stores (cache)`), r.stderr)
		assert.Equal(t, 2, strings.Count(r.stderr, good+": invalid: 2 problems\n"), "both files checked with -stores: %s", r.stderr)
		r = runCmd(t, bin, good, "-bogus")
		assert.Equal(t, 2, r.code, "an unknown flag after a file is a usage error")
		assert.Contains(t, r.stderr, "usage: sluicecheck rules.yaml")

		// After "--", every argument is a file, even one named like a flag.
		dir := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(dir, "-stores"), []byte("rules: []\n"), 0o600))
		cmd := exec.Command(bin, "-stores", "redis", "--", "-stores")
		cmd.Dir = dir
		out, err := cmd.Output()
		require.NoError(t, err)
		assert.Equal(t, "-stores: 0 rules (the file removes every rule)\n", string(out))
	})

	t.Run("long values", func(t *testing.T) {
		// A 1 MB store or a 256-byte param (the longest) is named
		// shortened, with the field; a 1 MB param is refused as too long.
		big := strings.Repeat("a", 1<<20)
		path := filepath.Join(t.TempDir(), "rules.json")
		require.NoError(t, os.WriteFile(path, []byte(`{"rules": [
  {"resource": "GET /a", "kind": "flow", "limit": 5, "window": "1s", "store": "`+big+`"},
  {"resource": "GET /b", "kind": "hotspot", "limit": 5, "window": "1s", "param": "`+big[:256]+`"}
]}`), 0o600))
		r := runCmd(t, bin, "-stores", "redis", "-params", "user", path)
		assert.Equal(t, 1, r.code)
		assert.Less(t, len(r.stderr), 1024, "%.500s", r.stderr)
		assert.Contains(t, r.stderr, `: store "`+big[:64]+`"...`)
		assert.Contains(t, r.stderr, `: param "`+big[:64]+`"...`)
		require.NoError(t, os.WriteFile(path, []byte(`{"rules": [
  {"resource": "GET /b", "kind": "hotspot", "limit": 5, "window": "1s", "param": "`+big+`"}
]}`), 0o600))
		r = runCmd(t, bin, path)
		assert.Equal(t, 1, r.code)
		assert.Less(t, len(r.stderr), 1024, "%.500s", r.stderr)
		assert.Contains(t, r.stderr, "param must be at most 256 bytes, got 1048576 bytes")
	})

	t.Run("YAML syntax", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "rules.yaml")
		require.NoError(t, os.WriteFile(path, []byte("rules:\n  - resource: GET /a\n    kind: flow\n   limit: 5\n"), 0o600))
		r := runCmd(t, bin, path)
		assert.Equal(t, 1, r.code)
		assert.Equal(t, path+":4: yaml: did not find expected '-' indicator, at column 4\n"+path+": invalid: 1 problem\n", r.stderr,
			"the line and column of the misindented limit (the parser alone says line 1)")
	})

	t.Run("usage", func(t *testing.T) {
		for _, args := range [][]string{nil, {"-bogus", "rules.yaml"}, {"-schema", "rules.yaml"}} {
			r := runCmd(t, bin, args...)
			assert.Equal(t, 2, r.code, "%q", args)
			assert.Empty(t, r.stdout)
			assert.Contains(t, r.stderr, "usage: sluicecheck rules.yaml", "%q", args)
		}
	})

	t.Run("schema", func(t *testing.T) {
		r := runCmd(t, bin, "-schema")
		assert.Equal(t, 0, r.code)
		assert.Equal(t, rulesfile.Schema, r.stdout)
		assert.True(t, strings.HasPrefix(r.stdout, "{"))
	})
}

// buildArgs are the go build arguments for the command under test: with
// -race when this test binary has it, so that the build reuses what the
// tests compiled (without, a cold cache compiled the standard library and
// every dependency again, about 58 CPU-seconds on 2 cores).
func buildArgs(bin string) []string {
	args := []string{"build", "-o", bin}
	if bi, ok := debug.ReadBuildInfo(); ok && slices.Contains(bi.Settings, debug.BuildSetting{Key: "-race", Value: "true"}) {
		args = append(args, "-race")
	}
	return append(args, ".")
}
