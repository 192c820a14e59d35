package benchtable

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Result is one run's figures of a benchmark: by sub-benchmark name ("" for
// the benchmark itself, "serial", "a/parallel16"; the -GOMAXPROCS suffix
// dropped), the value of each unit ("ns/op", "allocs/op", a reported
// metric).
type Result map[string]map[string]float64

// Build compiles the test binary of the package in dir into tmp as
// name.test and returns its path.
func Build(tmp, name, dir string) (string, error) {
	out, err := filepath.Abs(filepath.Join(tmp, name+".test"))
	if err != nil {
		return "", err
	}
	cmd := exec.Command("go", "test", "-c", "-o", out, ".")
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("building the benchmarks of %s: %w", dir, err)
	}
	return out, nil
}

var suffix = regexp.MustCompile(`-\d+$`)

// Run runs the benchmark name of the test binary bin, with -test.benchmem
// and benchtime, env added to its environment, and returns its figures.
func Run(bin, name, benchtime string, env ...string) (Result, error) {
	cmd := exec.Command(bin, "-test.run", "^$", "-test.bench", "^"+name+"$", "-test.benchmem", "-test.benchtime", benchtime)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w\n%s", filepath.Base(bin), name, err, out)
	}
	res := Parse(name, out)
	if len(res) == 0 {
		return nil, fmt.Errorf("%s %s: no result in\n%s", filepath.Base(bin), name, out)
	}
	return res, nil
}

// Parse returns the figures of benchmark name in the output of go test
// -bench.
func Parse(name string, out []byte) Result {
	res := Result{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 {
			continue
		}
		base := suffix.ReplaceAllString(f[0], "")
		sub, ok := strings.CutPrefix(base, name)
		if !ok || sub != "" && !strings.HasPrefix(sub, "/") {
			continue
		}
		units := map[string]float64{}
		for i := 2; i+1 < len(f); i += 2 {
			if v, err := strconv.ParseFloat(f[i], 64); err == nil {
				units[f[i+1]] = v
			}
		}
		res[strings.TrimPrefix(sub, "/")] = units
	}
	return res
}

// Values returns the value of unit of sub in each of rs, skipping the
// results that lack it.
func Values(rs []Result, sub, unit string) []float64 {
	var v []float64
	for _, r := range rs {
		if x, ok := r[sub][unit]; ok {
			v = append(v, x)
		}
	}
	return v
}

// Median returns the median of v (0 if empty); it sorts v.
func Median(v []float64) float64 {
	slices.Sort(v)
	if len(v) == 0 {
		return 0
	}
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

// Format prints v with no decimals from 10 up, one below.
func Format(v float64) string {
	if v >= 10 || v == 0 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}

// Ratio prints the median of v in bold with its range, two decimals, or
// "-" when v is empty.
func Ratio(v []float64) string {
	if len(v) == 0 {
		return "-"
	}
	return fmt.Sprintf("**%.2f** (%.2f-%.2f)", Median(v), slices.Min(v), slices.Max(v))
}

// Measured is the line above a table: when, how and on what machine it was
// measured, load being LoadAvg before the run.
func Measured(started time.Time, rounds int, benchtime, load string) string {
	return fmt.Sprintf("Measured %s, %d rounds of `-test.benchtime %s`, on: %s.\n", started.UTC().Format("2006-01-02 15:04 UTC"), rounds, benchtime, Machine(load))
}

// Machine describes the machine: CPU model and count, kernel, clock
// source, Go version, and load before the run.
func Machine(load string) string {
	model := "unknown CPU"
	virt := ""
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
				model = strings.TrimSpace(v)
				break
			}
		}
		if bytes.Contains(b, []byte(" hypervisor")) {
			virt = " (virtual machine)"
		}
	}
	kernel := "unknown kernel"
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		kernel = "Linux " + strings.TrimSpace(string(b))
	}
	src := "unknown"
	if b, err := os.ReadFile("/sys/devices/system/clocksource/clocksource0/current_clocksource"); err == nil {
		src = strings.TrimSpace(string(b))
	}
	return fmt.Sprintf("%s%s, %d CPUs, %s %s/%s, %s, clock source %s, load average %s before the run",
		model, virt, runtime.NumCPU(), runtime.Version(), runtime.GOOS, runtime.GOARCH, kernel, src, load)
}

// LoadAvg returns the 1, 5 and 15-minute load averages, or "unknown".
func LoadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// Markers around the table in a README.
const (
	Begin = "<!-- table: generated by cmd/table, do not edit -->\n"
	End   = "<!-- end of table -->\n"
)

// ReplaceTable replaces the text between the markers of the file at path
// with table.
func ReplaceTable(path, table string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	s := string(b)
	i, j := strings.Index(s, Begin), strings.Index(s, End)
	if i < 0 || j < i {
		return fmt.Errorf("%s: no %q ... %q markers", path, strings.TrimSpace(Begin), strings.TrimSpace(End))
	}
	s = s[:i+len(Begin)] + "\n" + table + "\n" + s[j:]
	return os.WriteFile(path, []byte(s), 0o644)
}

// Flags are the command-line flags of every table command.
type Flags struct {
	Rounds    int    // rounds of every benchmark
	Benchtime string // each benchmark's -test.benchtime
	Readme    string // the file whose table to replace; empty: print only
}

// ParseFlags parses the command line's -rounds (default 5), -benchtime
// (default 300ms) and -readme (default README.md).
func ParseFlags() Flags {
	var f Flags
	flag.IntVar(&f.Rounds, "rounds", 5, "rounds of every benchmark")
	flag.StringVar(&f.Benchtime, "benchtime", "300ms", "each benchmark's -test.benchtime")
	flag.StringVar(&f.Readme, "readme", "README.md", "the file whose table to replace; empty: print only")
	flag.Parse()
	return f
}
