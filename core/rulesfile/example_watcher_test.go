package rulesfile_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/rulesfile"
)

// The rules file of a running service changes: the watcher applies the new
// version, and keeps the rules in force when a version is invalid.
func ExampleWatcher() {
	dir, err := os.MkdirTemp("", "sluice-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "rules.yaml")
	write := func(limit int) {
		rules := fmt.Sprintf("rules:\n  - name: hello\n    resource: GET /hello\n    kind: flow\n    limit: %d\n", limit)
		if err := os.WriteFile(path, []byte(rules), 0o600); err != nil {
			fmt.Println(err)
		}
	}
	write(5)

	guard, err := core.New()
	if err != nil {
		fmt.Println(err)
		return
	}
	defer guard.Close()
	// A log without times and the temporary path, for the output below.
	logger := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey || a.Key == "path" {
				return slog.Attr{}
			}
			return a
		},
	}))
	w, err := rulesfile.NewWatcher(guard, path, rulesfile.WithLogger(logger))
	if err != nil {
		fmt.Println(err) // the file is missing or invalid: nothing is running
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }() // polls every second, until cancel
	defer func() {
		cancel()
		<-done
	}()

	// Run applies a new version within two seconds; Reload, at once.
	write(50)
	if err := w.Reload(); err != nil {
		fmt.Println(err)
	}
	fmt.Println("limit:", guard.Rules()[0].Limit)

	write(-1)
	if err := w.Reload(); err != nil {
		fmt.Println("limit still:", guard.Rules()[0].Limit)
	}
	// Output:
	// level=INFO msg="sluice: rules loaded" rules=1 added=[hello]
	// level=INFO msg="sluice: rules reloaded" rules=1 changed=[hello]
	// limit: 50
	// level=WARN msg="sluice: rules file rejected; the rules in force are kept" err="rules[0] (hello): line 5: limit must be >= 0, got -1"
	// limit still: 50
}
