package core_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core"
	"github.com/sluicekit/sluice/core/clock"
	"github.com/sluicekit/sluice/core/internal/system"
)

// TestReloadDoesNotReadCPUOverAMoment: a reload checks that a cpu rule's
// signal can be read, and that check's reading is kept as the rule's. It
// read the usage since the previous reading however recent: a service
// using a fifth of its CPU, reloaded 5ms after the previous reading while
// busy, read 1.0 and shed every request until the next sample, half a
// second later. The host is a fake cgroup v2 tree (one CPU of quota) on
// the fake clock; the sampler's goroutine never runs (its first sample is
// 500ms after the rule was set).
func TestReloadDoesNotReadCPUOverAMoment(t *testing.T) {
	root, write := hostTree(t)
	write("proc/self/cgroup", "0::/app\n")
	write("sys/fs/cgroup/app/cpu.max", "100000 100000\n")
	usage := func(d time.Duration) {
		write("sys/fs/cgroup/app/cpu.stat", "usage_usec "+strconv.FormatInt(d.Microseconds(), 10)+"\n")
	}
	usage(0)
	fc := clock.NewFake(time.Hour)
	cpu := core.Rule{Name: "cpu", Resource: "*", Kind: core.KindSystem, Signal: core.SignalCPU, Threshold: 0.8}
	other := core.Rule{Name: "other", Resource: "GET /other", Kind: core.KindFlow, Limit: 10}
	g, err := core.New(core.WithClock(fc), core.WithSystemSource(system.NewHost(root, fc, nil)), core.WithRules(cpu))
	require.NoError(t, err)
	defer g.Close()
	enter := func() error {
		e, err := g.Enter(context.Background(), "GET /x")
		if err == nil {
			e.Exit(nil)
		}
		return err
	}

	fc.Advance(400 * time.Millisecond)
	usage(80 * time.Millisecond) // a fifth of the CPU
	require.NoError(t, g.SetRules([]core.Rule{cpu, other}))
	require.NoError(t, enter(), "20% of the CPU")

	fc.Advance(5 * time.Millisecond)
	usage(85 * time.Millisecond) // busy for those 5ms
	require.NoError(t, g.SetRules([]core.Rule{cpu}))
	require.NoError(t, enter(), "still about 20% of the CPU: 5ms busy is no reading")
}

// hostTree returns the root of a fake host's file tree (system.NewHost's)
// and a function that writes a file of it.
func hostTree(t *testing.T) (root string, write func(name, data string)) {
	root = t.TempDir()
	return root, func(name, data string) {
		p := filepath.Join(root, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(data), 0o644))
	}
}
