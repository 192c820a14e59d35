package main

import (
	"archive/zip"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestGoRunAtVersion runs the command as its documentation says, "go run
// github.com/sluicekit/sluice/core/cmd/sluicecheck@VERSION rules.yaml", in
// a directory outside any module, offline: the root module of this
// checkout is served as version v0.0.1 by a file:// module proxy, and its
// dependencies by the module cache's download directory. It fails when
// the root go.mod has a replace or exclude directive (which go run
// pkg@version refuses) or when the command does not build from its
// module alone.
func TestGoRunAtVersion(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command from a module proxy")
	}
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	require.NoError(t, err)
	gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	require.NoError(t, err)
	out, err := exec.Command("go", "env", "GOMODCACHE").Output()
	require.NoError(t, err)
	cache := filepath.Join(strings.TrimSpace(string(out)), "cache", "download")

	const version = "v0.0.1"
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "proxy", "github.com", "sluicekit", "sluice", "@v")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "list"), []byte(version+"\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, version+".info"), []byte(`{"Version":"`+version+`","Time":"2026-01-01T00:00:00Z"}`), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, version+".mod"), gomod, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, version+".zip"), moduleZip(t, root, "github.com/sluicekit/sluice@"+version), 0o644))

	work := filepath.Join(tmp, "work")
	require.NoError(t, os.MkdirAll(work, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(work, "rules.yaml"), []byte("rules:\n  - {resource: GET /a, kind: flow, limit: 5, window: 1s}\n"), 0o644))
	cmd := exec.Command("go", "run", "github.com/sluicekit/sluice/core/cmd/sluicecheck@"+version, "rules.yaml")
	cmd.Dir = work
	cmd.Env = append(os.Environ(),
		"GOPROXY=file://"+filepath.Join(tmp, "proxy")+",file://"+cache,
		"GOMODCACHE="+filepath.Join(tmp, "modcache"),
		"GOFLAGS=-modcacherw -trimpath",
		"GOSUMDB=off", "GOWORK=off", "GO111MODULE=on", "GOTOOLCHAIN=local",
	)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "%s", stderr.String())
	require.Equal(t, "rules.yaml: 1 rule: 1 flow\n", stdout.String())
}

// moduleZip returns the zip of the module at root, its files under
// prefix (module@version): every file but those of .git and of nested
// modules (directories with a go.mod of their own).
func moduleZip(t *testing.T, root, prefix string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path == root {
				return nil
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil || d.Name() == ".git" || d.Name() == "vendor" {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		w, err := zw.Create(prefix + "/" + filepath.ToSlash(rel))
		if err != nil {
			return err
		}
		_, err = w.Write(data)
		return err
	})
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	return buf.Bytes()
}
