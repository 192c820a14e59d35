// Package testmain is the TestMain of the packages under core whose code
// starts goroutines: their tests are quiet and leave no goroutine running.
package testmain

import (
	"flag"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"testing"

	"go.uber.org/goleak"
)

// Run runs the tests of m, then after (when given), and exits. Unless -v is
// given, the default logger, which Guards built without WithLogger log to,
// discards, so that passing tests print nothing. Goroutines still running
// after the tests (goleak) fail them, named with their stacks.
func Run(m *testing.M, after func()) {
	flag.Parse()
	if !testing.Verbose() {
		slog.SetDefault(slog.New(slog.DiscardHandler))
	}
	code := m.Run()
	if after != nil {
		after()
	}
	if code == 0 {
		// A Guard a test dropped without Close stops its goroutines when
		// it is collected (runtime.AddCleanup): collect before looking.
		runtime.GC()
		runtime.GC()
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goroutines left running after the tests:", err)
			code = 1
		}
	}
	os.Exit(code)
}
