package system

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/sluicekit/sluice/core/clock"
)

// Host is the Source of the machine the process runs on, or of its
// container: CPU usage from the cgroup v2 files cpu.max and cpu.stat of
// the process's cgroup when cpu.max sets a quota (usage over the quota),
// else from /proc/stat (the busy share of all CPUs); the load average from
// /proc/loadavg. Its first CPU reading covers the time since boot
// (/proc/stat) or is 0 (cgroup); each later one the time since the
// previous. Host is not safe for concurrent use: a Sampler serializes its
// calls.
type Host struct {
	root  string // the file system root: "/" but in tests
	clock clock.Clock

	found  bool   // the CPU files were looked for
	cgroup string // the cgroup's directory when cpu.max sets a quota
	quota  float64
	// The previous CPU reading: cgroup usage in microseconds at at, or
	// /proc/stat's busy and total ticks.
	usage, at   int64
	busy, total uint64
	primed      bool
}

// NewHost returns the Host whose files are under root ("/"), timing cgroup
// readings on c.
func NewHost(root string, c clock.Clock) *Host { return &Host{root: root, clock: c} }

func (h *Host) path(p string) string { return filepath.Join(h.root, p) }

// CPU returns the CPU usage since the previous call.
func (h *Host) CPU() (float64, error) {
	if !h.found {
		h.found = true
		h.cgroup, h.quota = h.findQuota()
	}
	if h.cgroup != "" {
		return h.cgroupCPU()
	}
	return h.procCPU()
}

// findQuota returns the directory of the process's cgroup v2 and its CPU
// quota in CPUs, or "" when it has none: no cgroup v2, or cpu.max "max".
func (h *Host) findQuota() (string, float64) {
	data, err := os.ReadFile(h.path("proc/self/cgroup"))
	if err != nil {
		return "", 0
	}
	var rel string
	for line := range strings.Lines(string(data)) {
		if p, ok := strings.CutPrefix(strings.TrimSpace(line), "0::"); ok {
			rel = p
		}
	}
	if rel == "" {
		return "", 0
	}
	// The unified hierarchy, or its mount under a hybrid one.
	for _, base := range []string{"sys/fs/cgroup", "sys/fs/cgroup/unified"} {
		dir := h.path(filepath.Join(base, rel))
		data, err := os.ReadFile(filepath.Join(dir, "cpu.max"))
		if err != nil {
			continue
		}
		if q, err := ParseCPUMax(string(data)); err == nil && q > 0 {
			return dir, q
		}
		return "", 0
	}
	return "", 0
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

// cgroupCPU returns the cgroup's usage over its quota since the previous
// call, at most 1.
func (h *Host) cgroupCPU() (float64, error) {
	data, err := os.ReadFile(filepath.Join(h.cgroup, "cpu.stat"))
	if err != nil {
		return 0, fmt.Errorf("cpu usage: %w", err)
	}
	usage, err := ParseCPUStat(string(data))
	if err != nil {
		return 0, fmt.Errorf("cpu usage: %w", err)
	}
	now := int64(h.clock.Now())
	prevUsage, prevAt, primed := h.usage, h.at, h.primed
	h.usage, h.at, h.primed = usage, now, true
	elapsed := now - prevAt
	if !primed || elapsed <= 0 || usage < prevUsage {
		return 0, nil
	}
	used := float64(usage-prevUsage) * float64(time.Microsecond) / (float64(elapsed) * h.quota)
	return min(max(used, 0), 1), nil
}

// ParseProcStat returns the busy and total ticks of all CPUs from the
// "cpu" line of /proc/stat: idle and iowait are not busy; guest time is
// already in user and nice.
func ParseProcStat(s string) (busy, total uint64, err error) {
	for line := range strings.Lines(s) {
		f := strings.Fields(line)
		if len(f) == 0 || f[0] != "cpu" {
			continue
		}
		if len(f) < 5 {
			return 0, 0, fmt.Errorf("/proc/stat: cpu line too short: %q", strings.TrimSpace(line))
		}
		var idle uint64
		for i, v := range f[1:min(len(f), 9)] { // user nice system idle iowait irq softirq steal
			n, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
				return 0, 0, fmt.Errorf("/proc/stat: cpu line: %q is not a count", v)
			}
			total += n
			if i == 3 || i == 4 {
				idle += n
			}
		}
		return total - idle, total, nil
	}
	return 0, 0, errors.New("/proc/stat: no cpu line")
}

// procCPU returns the busy share of all CPUs since the previous call.
func (h *Host) procCPU() (float64, error) {
	data, err := os.ReadFile(h.path("proc/stat"))
	if err != nil {
		return 0, fmt.Errorf("cpu usage: %w", err)
	}
	busy, total, err := ParseProcStat(string(data))
	if err != nil {
		return 0, fmt.Errorf("cpu usage: %w", err)
	}
	prevBusy, prevTotal := h.busy, h.total
	h.busy, h.total = busy, total
	if total <= prevTotal || busy < prevBusy {
		return 0, nil
	}
	return min(float64(busy-prevBusy)/float64(total-prevTotal), 1), nil
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
