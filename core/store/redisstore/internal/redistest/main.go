package redistest

import (
	"flag"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"go.uber.org/goleak"
)

// Main runs the tests of m with Redis's logs quiet, then after (when
// given), and exits: a package's TestMain. Unless -v is given, the default
// logger discards, so that passing tests print nothing; goroutines still
// running after the tests (goleak) fail them, named with their stacks.
func Main(m *testing.M, after func()) {
	flag.Parse()
	QuietRedisLogs()
	if !testing.Verbose() {
		slog.SetDefault(slog.New(slog.DiscardHandler))
	}
	code := m.Run()
	if after != nil {
		after()
	}
	if code == 0 {
		// A Guard a test dropped without Close stops its goroutines when
		// it is collected: collect before looking.
		runtime.GC()
		runtime.GC()
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goroutines left running after the tests:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// Saturate keeps perCPU spinning goroutines per CPU (GOMAXPROCS) busy until
// tb ends, so that every other goroutine, the code under test's included,
// waits for a CPU: for tests of a promise on a busy host.
func Saturate(tb testing.TB, perCPU int) {
	var stop atomic.Bool
	var wg sync.WaitGroup
	for range perCPU * runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for x := 0; !stop.Load(); x++ {
				_ = x * x
			}
		})
	}
	tb.Cleanup(func() {
		stop.Store(true)
		wg.Wait()
	})
}
