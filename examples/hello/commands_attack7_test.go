package main

import (
	"cmp"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestREADMECommandsNameWhatExists checks the commands the README gives a
// newcomer against the repository: every package of `go get` is a module
// of .ci/modules, every `go run` of a sluice package and every
// `go -C examples run ./X` names a directory holding a main package, and
// every `go -C DIR` a module. A renamed module or example then fails here
// rather than at a reader's first command.
func TestREADMECommandsNameWhatExists(t *testing.T) {
	root := filepath.Join("..", "..")
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	require.NoError(t, err)
	list, err := os.ReadFile(filepath.Join(root, ".ci", "modules"))
	require.NoError(t, err)
	modules := strings.Fields(regexp.MustCompile(`(?m)#.*$`).ReplaceAllString(string(list), ""))
	const prefix = "github.com/sluicekit/sluice"
	rel := func(path string) string { return strings.TrimPrefix(strings.TrimPrefix(path, prefix), "/") }
	isMain := func(dir string) bool {
		files, _ := filepath.Glob(filepath.Join(root, dir, "*.go"))
		return slices.ContainsFunc(files, func(f string) bool {
			b, err := os.ReadFile(f)
			return err == nil && regexp.MustCompile(`(?m)^package main$`).Match(b)
		})
	}

	gets := regexp.MustCompile(`go get (`+prefix+`\S*)(?:\s+# or (.*))?`).FindAllStringSubmatch(string(readme), -1)
	require.NotEmpty(t, gets)
	for _, m := range gets {
		assert.Contains(t, modules, cmp.Or(rel(m[1]), "."), "README: go get %s is no module", m[1])
		for _, alt := range strings.Split(m[2], ", ") { // "# or adapters/echo, adapters/grpc"
			if alt != "" {
				assert.Contains(t, modules, alt, "README: go get %s: no module %s", m[1], alt)
			}
		}
	}
	runs := regexp.MustCompile(`go run (`+prefix+`[^@\s]*)`).FindAllStringSubmatch(string(readme), -1)
	require.NotEmpty(t, runs)
	for _, m := range runs {
		assert.True(t, isMain(rel(m[1])), "README: go run %s is no command", m[1])
	}
	dirs := regexp.MustCompile(`go -C ([^\s\x60]+) (run|test) ([^\s\x60]+)`).FindAllStringSubmatch(string(readme), -1)
	require.NotEmpty(t, dirs)
	for _, m := range dirs {
		assert.Contains(t, modules, m[1], "README: go -C %s is no module", m[1])
		if m[2] == "run" {
			assert.True(t, isMain(filepath.Join(m[1], m[3])), "README: go -C %s run %s is no command", m[1], m[3])
		}
	}
	for _, m := range regexp.MustCompile(`(?m)^\s+cd (\S+) && go run (\S+)`).FindAllStringSubmatch(string(readme), -1) {
		assert.True(t, isMain(filepath.Join(m[1], m[2])), "README: cd %s && go run %s is no command", m[1], m[2])
	}
}

// TestExampleCommandsRun checks the commands the examples' documentation
// gives: run from the repository's root, `go run ./examples/X` fails (the
// examples are a module of their own: "main module does not contain
// package"), so none is written that way, and each `go -C examples run ./X`
// names a directory holding a main package.
func TestExampleCommandsRun(t *testing.T) {
	root := filepath.Join("..", "..")
	var checked int
	err := filepath.WalkDir(filepath.Join(root, "examples"), func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasSuffix(path, "_test.go") || !slices.Contains([]string{".go", ".md", ".yaml"}, filepath.Ext(path)) {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		assert.NotRegexp(t, `go run \./examples/`, string(b), "%s: run from the root, go run ./examples/... is not found; write go -C examples run ./...", path)
		for _, m := range regexp.MustCompile(`go -C examples run \./([^\s\x60()]*[^\s\x60().,])`).FindAllStringSubmatch(string(b), -1) {
			files, _ := filepath.Glob(filepath.Join(root, "examples", m[1], "*.go"))
			assert.True(t, slices.ContainsFunc(files, func(f string) bool {
				src, err := os.ReadFile(f)
				return err == nil && regexp.MustCompile(`(?m)^package main$`).Match(src)
			}), "%s: go -C examples run ./%s is no command", path, m[1])
			checked++
		}
		return nil
	})
	require.NoError(t, err)
	assert.NotZero(t, checked)
}
