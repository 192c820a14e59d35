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

func TestParseCPUStatAndSelfStat(t *testing.T) {
	n, err := system.ParseCPUStat("usage_usec 123456\nuser_usec 100000\nsystem_usec 23456\n")
	require.NoError(t, err)
	assert.Equal(t, int64(123456), n)
	_, err = system.ParseCPUStat("user_usec 1\n")
	assert.ErrorContains(t, err, "no usage_usec")

	ticks, err := system.ParseSelfStat("4242 (my (odd) cmd) S 1 4242 4242 0 -1 4194560 500 0 0 0 120 30 0 0 20 0 9 0 100 1000 200\n")
	require.NoError(t, err)
	assert.Equal(t, int64(150), ticks, "utime 120 + stime 30")
	_, err = system.ParseSelfStat("4242 (cmd) S 1 2")
	assert.ErrorContains(t, err, "too few fields")
	_, err = system.ParseSelfStat("4242 (cmd) S 1 4242 4242 0 -1 4194560 500 0 0 0 x 30 0")
	assert.ErrorContains(t, err, "utime and stime")

	load, err := system.ParseLoadavg([]byte("0.75 1.30 2.36 3/103 9477\n"))
	require.NoError(t, err)
	assert.Equal(t, 0.75, load)
	_, err = system.ParseLoadavg([]byte("x"))
	assert.Error(t, err)
}

// tree writes the files of a host under a temporary root and returns
// the root and a function that writes more.
func tree(t *testing.T, files map[string]string) (root string, write func(name, data string)) {
	root = t.TempDir()
	write = func(name, data string) {
		p := filepath.Join(root, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(data), 0o644))
	}
	for name, data := range files {
		write(name, data)
	}
	return root, write
}

// saturated is a /proc/stat of a host whose every CPU is busy: other
// processes' work, which no reading may count.
const saturated = "cpu 1000000 0 0 0 0 0 0 0 0 0\n"

// cpus returns a cpus function of a Host: n CPUs.
func cpus(n int) func() int { return func() int { return n } }

func TestHostCPUFromTheCgroupQuota(t *testing.T) {
	root, write := tree(t, map[string]string{
		"proc/self/cgroup":          "0::/app\n",
		"sys/fs/cgroup/app/cpu.max": "50000 100000\n", // half a CPU
		"proc/stat":                 saturated,
	})
	fc := clock.NewFake(time.Second)
	h := system.NewHost(root, fc, cpus(8))
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

// TestHostCPUOfTheBindingQuota: the quota that binds the process is the
// smallest on its cgroup and its parents, in cgroup v2 or v1 (separate or
// joint cpu and cpuacct hierarchies, mounted at the root of the
// hierarchy or of a container's cgroup), or GOMAXPROCS when fewer; its
// cgroup's usage is read over it. Each tree's first reading primes, and
// the second covers 1s in which the cgroup used usage (in its file's
// unit). Before, only a v2 quota on the process's own cgroup was read;
// else the whole machine's /proc/stat, here saturated by others.
func TestHostCPUOfTheBindingQuota(t *testing.T) {
	const v1Mounts = "32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n" +
		"33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct\n" +
		"41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n"
	for _, tc := range []struct {
		name   string
		files  map[string]string
		cpus   int
		usage  string // the file of the usage
		before string // its reading, then one 1s later
		after  string
		want   float64
	}{
		{
			name: "v2, on a parent (a pod), smaller than the grandparent's",
			files: map[string]string{
				"proc/self/cgroup":                        "0::/kubepods/pod1/ctr\n",
				"proc/self/mountinfo":                     "30 23 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n",
				"sys/fs/cgroup/kubepods/pod1/ctr/cpu.max": "max 100000\n",
				"sys/fs/cgroup/kubepods/pod1/cpu.max":     "100000 100000\n",
				"sys/fs/cgroup/kubepods/cpu.max":          "400000 100000\n",
			},
			cpus: 4, usage: "sys/fs/cgroup/kubepods/pod1/cpu.stat",
			before: "usage_usec 7000000\n", after: "usage_usec 7500000\n", want: 0.5,
		},
		{
			name: "v2, GOMAXPROCS fewer than the quota",
			files: map[string]string{
				"proc/self/cgroup":          "0::/app\n",
				"sys/fs/cgroup/app/cpu.max": "800000 100000\n",
			},
			cpus: 2, usage: "sys/fs/cgroup/app/cpu.stat",
			before: "usage_usec 0\n", after: "usage_usec 1000000\n", want: 0.5,
		},
		{
			name: "v1, separate cpu and cpuacct hierarchies, on the process's cgroup",
			files: map[string]string{
				"proc/self/cgroup":                        "2:cpuacct:/svc\n1:cpu:/svc\n0::/\n",
				"proc/self/mountinfo":                     v1Mounts,
				"sys/fs/cgroup/cpu/cpu.cfs_quota_us":      "-1\n",
				"sys/fs/cgroup/cpu/cpu.cfs_period_us":     "100000\n",
				"sys/fs/cgroup/cpu/svc/cpu.cfs_quota_us":  "150000\n",
				"sys/fs/cgroup/cpu/svc/cpu.cfs_period_us": "100000\n",
				"sys/fs/cgroup/cpuacct/cpuacct.usage":     "999999999999\n",
				"sys/fs/cgroup/unified/cpu.max":           "max\n",
			},
			cpus: 4, usage: "sys/fs/cgroup/cpuacct/svc/cpuacct.usage",
			before: "1000000000\n", after: "1300000000\n", want: 0.2,
		},
		{
			name: "v1, joint hierarchy, on a parent",
			files: map[string]string{
				"proc/self/cgroup":    "3:cpu,cpuacct:/kubepods/pod1/ctr\n",
				"proc/self/mountinfo": "32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n",
				"sys/fs/cgroup/cpu,cpuacct/kubepods/pod1/ctr/cpu.cfs_quota_us":  "-1\n",
				"sys/fs/cgroup/cpu,cpuacct/kubepods/pod1/ctr/cpu.cfs_period_us": "100000\n",
				"sys/fs/cgroup/cpu,cpuacct/kubepods/pod1/cpu.cfs_quota_us":      "50000\n",
				"sys/fs/cgroup/cpu,cpuacct/kubepods/pod1/cpu.cfs_period_us":     "100000\n",
			},
			cpus: 4, usage: "sys/fs/cgroup/cpu,cpuacct/kubepods/pod1/cpuacct.usage",
			before: "0\n", after: "400000000\n", want: 0.8,
		},
		{
			name: "v1, a container's view: its cgroup mounted as the root",
			files: map[string]string{
				"proc/self/cgroup":                            "3:cpu,cpuacct:/docker/abc\n",
				"proc/self/mountinfo":                         "32 31 0:29 /docker/abc /sys/fs/cgroup/cpu,cpuacct ro - cgroup cgroup rw,cpu,cpuacct\n",
				"sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us":  "200000\n",
				"sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us": "100000\n",
			},
			cpus: 4, usage: "sys/fs/cgroup/cpu,cpuacct/cpuacct.usage",
			before: "0\n", after: "2000000000\n", want: 1,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.files["proc/stat"] = saturated
			tc.files["proc/self/stat"] = "1 (x) R 0 1 1 0 -1 0 0 0 0 0 5000 5000 0 0 20 0 1 0 1 1 1\n"
			root, write := tree(t, tc.files)
			fc := clock.NewFake(time.Hour)
			h := system.NewHost(root, fc, cpus(tc.cpus))
			write(tc.usage, tc.before)
			got, err := h.CPU()
			require.NoError(t, err)
			assert.Zero(t, got)
			fc.Advance(time.Second)
			write(tc.usage, tc.after)
			got, err = h.CPU()
			require.NoError(t, err)
			assert.InDelta(t, tc.want, got, 1e-9)
		})
	}
}

// TestHostCPUWithoutQuotaIsTheProcesssOwn: with no quota (v2 cpu.max
// "max", v1 cfs_quota_us -1, or no cgroup at all) the reading is the
// process's own CPU time over the CPUs it may use: on a host saturated by
// other processes (/proc/stat), a service using a tenth of its CPUs reads
// 0.1, where it read 1 and was shed; with a quota whose cgroup has no
// usage file, the process's own time over the quota.
func TestHostCPUWithoutQuotaIsTheProcesssOwn(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  float64
	}{
		{"v2, no quota", map[string]string{"proc/self/cgroup": "0::/app\n", "sys/fs/cgroup/app/cpu.max": "max 100000\n"}, 0.1},
		{"v1, no quota", map[string]string{"proc/self/cgroup": "1:cpu,cpuacct:/\n", "sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us": "-1\n", "sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us": "100000\n"}, 0.1},
		{"no cgroup", map[string]string{}, 0.1},
		{"a quota without a usage file", map[string]string{"proc/self/cgroup": "0::/app\n", "sys/fs/cgroup/app/cpu.max": "50000 100000\n"}, 0.4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.files["proc/stat"] = saturated
			root, write := tree(t, tc.files)
			fc := clock.NewFake(time.Hour)
			h := system.NewHost(root, fc, cpus(2))
			write("proc/self/stat", "77 (svc) S 1 77 77 0 -1 0 0 0 0 0 300 100 0 0 20 0 4 0 1 1 1\n")
			got, err := h.CPU()
			require.NoError(t, err)
			assert.Zero(t, got)
			fc.Advance(time.Second)
			// 20 ticks (0.2s of CPU) in 1s, of 2 CPUs.
			write("proc/self/stat", "77 (svc) S 1 77 77 0 -1 0 0 0 0 0 315 105 0 0 20 0 4 0 1 1 1\n")
			got, err = h.CPU()
			require.NoError(t, err)
			assert.InDelta(t, tc.want, got, 1e-9)
		})
	}
}

func TestHostWithoutFiles(t *testing.T) {
	h := system.NewHost(t.TempDir(), clock.NewFake(0), nil)
	_, err := h.CPU()
	assert.ErrorContains(t, err, "cpu usage: open ")
	_, err = h.Load()
	assert.ErrorContains(t, err, "load average: open ")
}

func TestHostOfThisMachine(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
	h := system.NewHost("/", sysclock.New(), nil)
	for range 2 {
		v, err := h.CPU()
		require.NoError(t, err)
		assert.True(t, v >= 0 && v <= 1, "%v", v)
	}
	v, err := h.Load()
	require.NoError(t, err)
	assert.GreaterOrEqual(t, v, 0.0)
}
