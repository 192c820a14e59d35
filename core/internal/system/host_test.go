package system_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sluicekit/sluice/core/clock"
	"github.com/sluicekit/sluice/core/internal/sysclock"
	"github.com/sluicekit/sluice/core/internal/system"
)

func TestParseCPUMax(t *testing.T) {
	for _, tt := range []struct {
		in      string
		want    float64
		wantErr string
	}{
		{"max 100000\n", 0, ""},
		{"50000 100000\n", 0.5, ""},
		{"200000 100000", 2, ""},
		{"150000", 1.5, ""},
		{"", 0, "want"},
		{"max 100000 1", 0, "want"},
		{"-5 100000", 0, "quota"},
		{"half 100000", 0, "quota"},
		{"50000 0", 0, "period"},
	} {
		got, err := system.ParseCPUMax(tt.in)
		if tt.wantErr != "" {
			assert.ErrorContains(t, err, tt.wantErr, "%q", tt.in)
			continue
		}
		require.NoError(t, err, "%q", tt.in)
		assert.Equal(t, tt.want, got, "%q", tt.in)
	}
}

func TestParseCPUStatAndProcStat(t *testing.T) {
	n, err := system.ParseCPUStat("usage_usec 123456\nuser_usec 100000\nsystem_usec 23456\n")
	require.NoError(t, err)
	assert.Equal(t, int64(123456), n)
	_, err = system.ParseCPUStat("user_usec 1\n")
	assert.ErrorContains(t, err, "no usage_usec")

	busy, total, err := system.ParseProcStat("cpu  100 10 40 800 50 0 0 0 0 0\ncpu0 1 2 3 4 5 6 7 8 0 0\n")
	require.NoError(t, err)
	assert.Equal(t, uint64(150), busy, "user nice system: not idle, not iowait")
	assert.Equal(t, uint64(1000), total)
	_, _, err = system.ParseProcStat("intr 1 2 3\n")
	assert.ErrorContains(t, err, "no cpu line")

	load, err := system.ParseLoadavg([]byte("0.75 1.30 2.36 3/103 9477\n"))
	require.NoError(t, err)
	assert.Equal(t, 0.75, load)
	_, err = system.ParseLoadavg([]byte("x"))
	assert.Error(t, err)
}

// hostFiles writes the files of a host under a temporary root: the
// process's cgroup /app with cpu.max, and /proc/stat.
func hostFiles(t *testing.T, cpuMax string) (root string, write func(name, data string)) {
	root = t.TempDir()
	write = func(name, data string) {
		p := filepath.Join(root, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(data), 0o644))
	}
	write("proc/self/cgroup", "0::/app\n")
	if cpuMax != "" {
		write("sys/fs/cgroup/app/cpu.max", cpuMax)
	}
	return root, write
}

func TestHostCPUFromTheCgroupQuota(t *testing.T) {
	root, write := hostFiles(t, "50000 100000\n") // half a CPU
	fc := clock.NewFake(time.Second)
	h := system.NewHost(root, fc)
	write("sys/fs/cgroup/app/cpu.stat", "usage_usec 1000000\n")
	write("proc/stat", "cpu 1 0 0 1 0 0 0 0\n") // not read: the cgroup has a quota
	for _, step := range []struct {
		advance time.Duration
		usage   string
		want    float64
	}{
		{0, "1000000", 0},                      // the first reading has no previous one
		{time.Second, "1250000", 0.5},          // 0.25s of CPU in 1s of a 0.5 CPU quota
		{time.Second, "1750000", 1},            // the whole quota
		{2 * time.Second, "2000000", 0.25},     // 0.25s in 2s
		{time.Second, "2900000", 1},            // above the quota (a burst): at most 1
		{time.Second, "100", 0},                // the counter went back: no reading
		{500 * time.Millisecond, "50100", 0.2}, // 0.05s in 0.5s
	} {
		fc.Advance(step.advance)
		write("sys/fs/cgroup/app/cpu.stat", "usage_usec "+step.usage+"\nuser_usec 1\n")
		got, err := h.CPU()
		require.NoError(t, err)
		assert.InDelta(t, step.want, got, 1e-9, "usage %s", step.usage)
	}
}

func TestHostCPUFromProcStat(t *testing.T) {
	for _, cpuMax := range []string{"max 100000\n", ""} { // no quota, or no cgroup v2 file
		root, write := hostFiles(t, cpuMax)
		h := system.NewHost(root, clock.NewFake(0))
		write("proc/stat", "cpu 300 0 100 500 100 0 0 0 0 0\n")
		got, err := h.CPU()
		require.NoError(t, err)
		assert.InDelta(t, 0.4, got, 1e-9, "since boot: 400 busy of 1000")
		write("proc/stat", "cpu 450 0 130 600 120 0 0 0 0 0\n")
		got, err = h.CPU()
		require.NoError(t, err)
		assert.InDelta(t, 0.6, got, 1e-9, "180 busy of 300")
	}
}

func TestHostWithoutFiles(t *testing.T) {
	h := system.NewHost(t.TempDir(), clock.NewFake(0))
	_, err := h.CPU()
	assert.ErrorContains(t, err, "cpu usage: open ")
	_, err = h.Load()
	assert.ErrorContains(t, err, "load average: open ")
}

func TestHostOfThisMachine(t *testing.T) {
	if _, err := os.Stat("/proc/stat"); err != nil {
		t.Skip("no /proc")
	}
	h := system.NewHost("/", sysclock.New())
	for range 2 {
		v, err := h.CPU()
		require.NoError(t, err)
		assert.True(t, v >= 0 && v <= 1, "%v", v)
	}
	v, err := h.Load()
	require.NoError(t, err)
	assert.GreaterOrEqual(t, v, 0.0)
}
