package system

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sluicekit/sluice/core/clock"
)

// Host is the Source of the process's own pressure, from the files of the
// machine or container it runs on: its cgroup's or its own CPU usage (see
// the package doc), /proc/loadavg's load average. Its first CPU reading is
// 0; each later one covers the time since the previous, at least minSpan.
// Host is not safe for concurrent use: a Sampler serializes its calls.
type Host struct {
	root  string // the file system root: "/" but in tests
	clock clock.Clock
	cpus  func() int // the CPUs the process may use

	found bool
	// The quota that binds the process, in CPUs (0: none), and the file
	// of its cgroup's usage: cpu.stat (v2) or cpuacct.usage (v1); ""
	// without a quota, or when the file cannot be read: the process's.
	quota      float64
	usageFile  string
	usageNanos bool // usageFile counts nanoseconds (v1), not microseconds
	// The previous CPU reading: usage in nanoseconds at at, and the
	// fraction it gave.
	usage, at int64
	primed    bool
	last      float64
}

// NewHost returns the Host whose files are under root ("/"), timing its
// readings on c, of a process that may use cpus() CPUs (nil:
// runtime.GOMAXPROCS).
func NewHost(root string, c clock.Clock, cpus func() int) *Host {
	if cpus == nil {
		cpus = func() int { return runtime.GOMAXPROCS(0) }
	}
	return &Host{root: root, clock: c, cpus: cpus}
}

func (h *Host) path(p string) string { return filepath.Join(h.root, p) }

// CPU returns the process's CPU usage since the previous reading (the
// previous reading itself when it is less than minSpan old), over the CPUs
// it may use: its quota's, or GOMAXPROCS (the fewer), at most 1.
func (h *Host) CPU() (float64, error) {
	if !h.found {
		h.found = true
		h.quota, h.usageFile, h.usageNanos = h.findQuota()
	}
	now := int64(h.clock.Now())
	if elapsed := now - h.at; h.primed && elapsed >= 0 && elapsed < int64(minSpan) {
		return h.last, nil
	}
	usage, err := h.readUsage()
	if err != nil {
		return 0, fmt.Errorf("cpu usage: %w", err)
	}
	prevUsage, prevAt, primed := h.usage, h.at, h.primed
	h.usage, h.at, h.primed, h.last = usage, now, true, 0
	elapsed := now - prevAt
	if !primed || elapsed <= 0 || usage < prevUsage {
		return 0, nil
	}
	capacity := float64(max(h.cpus(), 1))
	if h.quota > 0 {
		capacity = min(capacity, h.quota)
	}
	h.last = min(max(float64(usage-prevUsage)/(float64(elapsed)*capacity), 0), 1)
	return h.last, nil
}

// minSpan is the shortest span a CPU reading covers: a call sooner after
// the previous reading (a reload checking a rule's signal, say) returns
// that reading, the usage over a few milliseconds being all or nothing.
const minSpan = Every / 2

const userHz = 100 // the unit of /proc/self/stat's times: USER_HZ, 100 on every Linux architecture

// readUsage returns the CPU time used so far, in nanoseconds: the
// cgroup's whose quota binds, else the process's (/proc/self/stat).
func (h *Host) readUsage() (int64, error) {
	if h.usageNanos && h.usageFile != "" {
		return readCount(h.usageFile)
	}
	file, parse, unit := h.usageFile, ParseCPUStat, int64(time.Microsecond)
	if file == "" {
		file, parse, unit = h.path("proc/self/stat"), ParseSelfStat, int64(time.Second/userHz)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return 0, err
	}
	n, err := parse(string(data))
	return n * unit, err
}

// ParseSelfStat returns utime plus stime, in clock ticks, of /proc/<pid>/stat.
func ParseSelfStat(s string) (int64, error) {
	// The command, in parentheses, may hold spaces and parentheses: the
	// fields are those after the last ')', from the state (field 3).
	i := strings.LastIndexByte(s, ')')
	f := strings.Fields(s[i+1:])
	if i < 0 || len(f) < 13 {
		return 0, fmt.Errorf("/proc/self/stat: too few fields in %q", strings.TrimSpace(s))
	}
	var ticks int64
	for _, v := range f[11:13] { // utime, stime: fields 14 and 15
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("/proc/self/stat: utime and stime must be non-negative integers, got %q", v)
		}
		ticks += n
	}
	return ticks, nil
}

// mount is a cgroup file system mounted at dir (under the Host's root),
// whose root is the cgroup root, of cgroup v2 or of the v1 controllers
// opts lists.
type mount struct {
	dir, root string
	v2        bool
	opts      []string
}

// mounts returns the cgroup mounts of /proc/self/mountinfo, or the usual
// ones when it cannot be read.
func (h *Host) mounts() []mount {
	data, err := os.ReadFile(h.path("proc/self/mountinfo"))
	if err != nil {
		return []mount{
			{dir: "/sys/fs/cgroup", root: "/", v2: true},
			{dir: "/sys/fs/cgroup/unified", root: "/", v2: true},
			{dir: "/sys/fs/cgroup/cpu,cpuacct", root: "/", opts: []string{"cpu", "cpuacct"}},
			{dir: "/sys/fs/cgroup/cpu", root: "/", opts: []string{"cpu"}},
			{dir: "/sys/fs/cgroup/cpuacct", root: "/", opts: []string{"cpuacct"}},
		}
	}
	var ms []mount
	for line := range strings.Lines(string(data)) {
		// ID parent major:minor root mountpoint options... - type source superoptions
		pre, post, ok := strings.Cut(line, " - ")
		f, g := strings.Fields(pre), strings.Fields(post)
		if !ok || len(f) < 5 || len(g) < 1 {
			continue
		}
		switch g[0] {
		case "cgroup2":
			ms = append(ms, mount{dir: f[4], root: f[3], v2: true})
		case "cgroup":
			if len(g) >= 3 {
				ms = append(ms, mount{dir: f[4], root: f[3], opts: strings.Split(g[2], ",")})
			}
		}
	}
	return ms
}

// cgroupDir returns the directory, under the Host's root, of the cgroup
// at path (as /proc/self/cgroup gives it) in m.
func (h *Host) cgroupDir(m mount, path string) string {
	rel, ok := strings.CutPrefix(path, m.root)
	if !ok || m.root == "/" {
		rel = path
	}
	return h.path(filepath.Join(m.dir, rel))
}

// findQuota returns the CPU quota that binds the process, in CPUs, the
// smallest of those set on its cgroup and on each parent, in cgroup v2 and
// v1, and the file of the usage of the cgroup that sets it, nanos true
// when the file counts nanoseconds (v1's cpuacct.usage); 0 and "" when
// there is none.
func (h *Host) findQuota() (quota float64, usage string, nanos bool) {
	data, err := os.ReadFile(h.path("proc/self/cgroup"))
	if err != nil {
		return 0, "", false
	}
	var v2 string
	v1 := map[string]string{} // controller -> path
	for line := range strings.Lines(string(data)) {
		// hierarchy-ID:controllers:path
		f := strings.SplitN(strings.TrimSpace(line), ":", 3)
		if len(f) != 3 {
			continue
		}
		if f[0] == "0" && f[1] == "" {
			v2 = f[2]
			continue
		}
		for c := range strings.SplitSeq(f[1], ",") {
			v1[c] = f[2]
		}
	}
	for _, m := range h.mounts() {
		switch {
		case m.v2 && v2 != "":
			h.eachLevel(m, v2, func(dir, _ string) {
				data, err := os.ReadFile(filepath.Join(dir, "cpu.max"))
				if err != nil {
					return
				}
				if q, err := ParseCPUMax(string(data)); err == nil && q > 0 && (quota == 0 || q < quota) {
					quota, usage, nanos = q, filepath.Join(dir, "cpu.stat"), false
				}
			})
		case !m.v2 && slices.Contains(m.opts, "cpu") && v1["cpu"] != "":
			h.eachLevel(m, v1["cpu"], func(dir, level string) {
				if q := readCFSQuota(dir); q > 0 && (quota == 0 || q < quota) {
					quota, usage, nanos = q, h.cpuacctUsage(level, v1["cpu"], v1["cpuacct"]), true
				}
			})
		}
	}
	if _, err := os.Stat(usage); err != nil {
		usage = "" // the process's usage over the quota, then
	}
	return quota, usage, nanos
}

// eachLevel calls f with the directory of the cgroup at path in m and of
// each of its parents up to m's root, with the path of each.
func (h *Host) eachLevel(m mount, path string, f func(dir, path string)) {
	for p := filepath.Clean("/" + path); ; p = filepath.Dir(p) {
		f(h.cgroupDir(m, p), p)
		if p == "/" || p == filepath.Clean(m.root) {
			return
		}
	}
}

// cpuacctUsage returns the cpuacct.usage file, in the cpuacct hierarchy
// (where the process's cgroup is own), of the v1 cgroup as many levels
// above the process's as level is above cpu, its cgroup in the cpu
// hierarchy; "" when there is none.
func (h *Host) cpuacctUsage(level, cpu, own string) string {
	if own == "" {
		return ""
	}
	p := filepath.Clean("/" + own)
	for range depth(cpu) - depth(level) {
		p = filepath.Dir(p)
	}
	for _, m := range h.mounts() {
		if !m.v2 && slices.Contains(m.opts, "cpuacct") {
			return filepath.Join(h.cgroupDir(m, p), "cpuacct.usage")
		}
	}
	return ""
}

// depth returns the number of elements of a cgroup path.
func depth(p string) int { return strings.Count(strings.TrimSuffix(filepath.Clean("/"+p), "/"), "/") }

// readCount returns the non-negative integer of the file at path.
func readCount(path string) (int64, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%s: must be a non-negative integer, got %q", filepath.Base(path), strings.TrimSpace(string(data)))
	}
	return n, nil
}

// readCFSQuota returns the quota of the v1 cgroup of dir in CPUs,
// cpu.cfs_quota_us over cpu.cfs_period_us, or 0 when it has none (-1)
// or the files cannot be read.
func readCFSQuota(dir string) float64 {
	quota, err := readCount(filepath.Join(dir, "cpu.cfs_quota_us"))
	period, err2 := readCount(filepath.Join(dir, "cpu.cfs_period_us"))
	if err != nil || err2 != nil || quota == 0 || period == 0 {
		return 0
	}
	return float64(quota) / float64(period)
}

// ParseCPUMax parses a cgroup v2 cpu.max file, "$MAX $PERIOD", and returns
// the quota in CPUs, MAX/PERIOD, or 0 when MAX is "max" (no quota).
func ParseCPUMax(s string) (float64, error) {
	f := strings.Fields(s)
	if len(f) == 0 || len(f) > 2 {
		return 0, fmt.Errorf("cpu.max: want \"MAX PERIOD\", got %q", strings.TrimSpace(s))
	}
	if f[0] == "max" {
		return 0, nil
	}
	quota, err := strconv.ParseInt(f[0], 10, 64)
	if err != nil || quota <= 0 {
		return 0, fmt.Errorf("cpu.max: quota must be a positive integer or max, got %q", f[0])
	}
	period := int64(100000) // the kernel's default when only MAX is written
	if len(f) == 2 {
		if period, err = strconv.ParseInt(f[1], 10, 64); err != nil || period <= 0 {
			return 0, fmt.Errorf("cpu.max: period must be a positive integer, got %q", f[1])
		}
	}
	return float64(quota) / float64(period), nil
}

// ParseCPUStat returns the usage_usec of a cgroup v2 cpu.stat file.
func ParseCPUStat(s string) (int64, error) {
	for line := range strings.Lines(s) {
		if v, ok := strings.CutPrefix(line, "usage_usec "); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil || n < 0 {
				return 0, fmt.Errorf("cpu.stat: usage_usec must be a non-negative integer, got %q", strings.TrimSpace(v))
			}
			return n, nil
		}
	}
	return 0, errors.New("cpu.stat: no usage_usec")
}

// Load returns the 1-minute load average from /proc/loadavg.
func (h *Host) Load() (float64, error) {
	data, err := os.ReadFile(h.path("proc/loadavg"))
	if err != nil {
		return 0, fmt.Errorf("load average: %w", err)
	}
	return ParseLoadavg(data)
}

// ParseLoadavg returns the 1-minute load average of a /proc/loadavg file.
func ParseLoadavg(data []byte) (float64, error) {
	f, _, _ := bytes.Cut(bytes.TrimSpace(data), []byte(" "))
	v, err := strconv.ParseFloat(string(f), 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("load average: /proc/loadavg must start with a non-negative number, got %q", f)
	}
	return v, nil
}
