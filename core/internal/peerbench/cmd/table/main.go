// Command table runs the peer benchmarks of core/internal/peerbench and
// adapters/grpc/internal/peerbench in alternating rounds and writes their
// table, with the machine it ran on, into core/internal/peerbench/README.md
// (between its table markers) and to standard output:
//
//	go -C core/internal/peerbench run ./cmd/table
//
// Each round runs, for each row, sluice's benchmark and its peers' as
// processes of their own, sluice first in even rounds and last in odd
// ones. The figures are medians over the rounds; a ratio is the median of
// the rounds' ratios of the process CPU time per operation (cpu-ns/op),
// peer over sluice: above 1 when sluice is cheaper.
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"log"
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

// bench is one benchmark function of a module's test binary.
type bench struct {
	mod  string // "core" or "grpc"
	name string // BenchmarkX
	what string // what it runs, for the table
}

// row is a path of sluice and the peers doing the same work, with the
// least ratio the issue asks for each peer (0: none).
type row struct {
	path    string
	sluice  bench
	peers   []bench
	targets []float64
	limit   float64 // at most this many cpu-ns/op for sluice, when no peer (0: none asked)
}

var rows = []row{
	{path: "one flow rule, passing", sluice: bench{"core", "BenchmarkPassSluiceFlow", "Enter+Exit"},
		peers:   []bench{{"core", "BenchmarkPassXTimeRate", "x/time/rate Allow"}, {"core", "BenchmarkPassUber", "uber Take"}},
		targets: []float64{1.0, 0.8}},
	{path: "no rule (statistics only)", sluice: bench{"core", "BenchmarkNoRuleSluice", "Enter+Exit"}, limit: 40},
	{path: "blocked request", sluice: bench{"core", "BenchmarkBlockedSluiceFlow", "Enter, flow rule used up"},
		peers:   []bench{{"core", "BenchmarkBlockedXTimeRate", "x/time/rate Allow, exhausted"}},
		targets: []float64{1.0}},
	{path: "hotspot rule, 10k users", sluice: bench{"core", "BenchmarkHotspot10kSluice", "Enter+Exit"},
		peers:   []bench{{"core", "BenchmarkHotspot10kSethvargo", "sethvargo Take"}},
		targets: []float64{0.8}},
	{path: "hotspot rule, 1M users, table holds all", sluice: bench{"core", "BenchmarkHotspot1MSluice", "Enter+Exit, MaxKeys 2M"},
		peers:   []bench{{"core", "BenchmarkHotspot1MSethvargo", "sethvargo Take"}},
		targets: []float64{1.0}},
	{path: "gRPC unary, one flow rule, 8 metadata headers", sluice: bench{"grpc", "BenchmarkUnarySluiceFlow", "interceptor + handler"},
		peers:   []bench{{"grpc", "BenchmarkUnaryGoGRPCMiddlewareXTimeRate", "go-grpc-middleware v2 ratelimit + x/time/rate"}},
		targets: []float64{1.0}},
	{path: "gRPC unary, the handler alone", sluice: bench{"grpc", "BenchmarkUnaryHandler", "baseline: a pass-through interceptor + handler, no limiter"}},
}

// result is one run's figures of a benchmark, by mode ("serial",
// "parallel").
type result map[string]figures

type figures struct{ ns, cpu, allocs float64 }

func main() {
	rounds := flag.Int("rounds", 5, "rounds of every benchmark")
	benchtime := flag.String("benchtime", "300ms", "each benchmark's -test.benchtime")
	readme := flag.String("readme", "README.md", "the file whose table to replace; empty: print only")
	flag.Parse()
	log.SetFlags(0)

	dir, err := os.MkdirTemp("", "peertable")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	bins := map[string]string{
		"core": build(dir, "core", "."),
		"grpc": build(dir, "grpc", "../../../adapters/grpc/internal/peerbench"),
	}
	load := loadAvg()
	started := time.Now().UTC()

	all := map[string][]result{} // by benchmark name, one per round
	for r := range *rounds {
		for _, rw := range rows {
			order := append([]bench{rw.sluice}, rw.peers...)
			if r%2 == 1 {
				slices.Reverse(order)
			}
			for _, b := range order {
				all[b.name] = append(all[b.name], runBench(bins[b.mod], b.name, *benchtime))
			}
		}
		log.Printf("round %d of %d done", r+1, *rounds)
	}

	var t strings.Builder
	fmt.Fprintf(&t, "Measured %s, %d rounds of `-test.benchtime %s`, on: %s.\n\n", started.Format("2006-01-02 15:04 UTC"), *rounds, *benchtime, machine(load))
	t.WriteString("| path | mode | sluice | ns/op | cpu-ns/op | allocs | peer | ns/op | cpu-ns/op | ratio (peer/sluice cpu-ns) | asked |\n")
	t.WriteString("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n")
	for _, rw := range rows {
		for _, mode := range []string{"serial", "parallel"} {
			s := all[rw.sluice.name]
			sl := fmt.Sprintf("| %s | %s | %s | %s | %s | %s |", rw.path, mode, rw.sluice.what,
				median(s, mode, func(f figures) float64 { return f.ns }), median(s, mode, func(f figures) float64 { return f.cpu }),
				median(s, mode, func(f figures) float64 { return f.allocs }))
			if len(rw.peers) == 0 {
				asked := ""
				if rw.limit > 0 {
					asked = fmt.Sprintf("cpu-ns/op ≤ %g", rw.limit)
				}
				fmt.Fprintf(&t, "%s | | | | %s |\n", sl, asked)
				continue
			}
			for i, p := range rw.peers {
				ps := all[p.name]
				fmt.Fprintf(&t, "%s %s | %s | %s | %s | ≥ %.1f |\n", sl, p.what,
					median(ps, mode, func(f figures) float64 { return f.ns }), median(ps, mode, func(f figures) float64 { return f.cpu }),
					ratio(s, ps, mode), rw.targets[i])
			}
		}
	}
	fmt.Print(t.String())
	if *readme != "" {
		if err := replaceTable(*readme, t.String()); err != nil {
			log.Fatal(err)
		}
	}
}

// build compiles the test binary of the package in dir as name.
func build(tmp, name, dir string) string {
	out, err := filepath.Abs(filepath.Join(tmp, name+".test"))
	if err != nil {
		log.Fatal(err)
	}
	cmd := exec.Command("go", "test", "-c", "-o", out, ".")
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		log.Fatalf("building the benchmarks of %s: %v", dir, err)
	}
	return out
}

var suffix = regexp.MustCompile(`-\d+$`)

// runBench runs the benchmark name of bin and returns its figures by mode.
func runBench(bin, name, benchtime string) result {
	cmd := exec.Command(bin, "-test.run", "^$", "-test.bench", "^"+name+"$", "-test.benchmem", "-test.benchtime", benchtime)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		log.Fatalf("%s %s: %v\n%s", filepath.Base(bin), name, err, out)
	}
	res := result{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || !strings.HasPrefix(f[0], name+"/") {
			continue
		}
		mode := suffix.ReplaceAllString(strings.TrimPrefix(f[0], name+"/"), "")
		var fg figures
		for i := 2; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				continue
			}
			switch f[i+1] {
			case "ns/op":
				fg.ns = v
			case "cpu-ns/op":
				fg.cpu = v
			case "allocs/op":
				fg.allocs = v
			}
		}
		res[mode] = fg
	}
	if len(res) == 0 {
		log.Fatalf("%s %s: no result in\n%s", filepath.Base(bin), name, out)
	}
	return res
}

// median returns the median of the figure of rs in mode that of picks.
func median(rs []result, mode string, of func(figures) float64) string {
	var v []float64
	for _, r := range rs {
		v = append(v, of(r[mode]))
	}
	return format(mid(v))
}

// ratio returns the median over the rounds of peer's cpu-ns/op over
// sluice's in mode, and their range.
func ratio(sluice, peer []result, mode string) string {
	var v []float64
	for i := range min(len(sluice), len(peer)) {
		if s := sluice[i][mode].cpu; s > 0 {
			v = append(v, peer[i][mode].cpu/s)
		}
	}
	if len(v) == 0 {
		return "-"
	}
	return fmt.Sprintf("**%.2f** (%.2f-%.2f)", mid(v), slices.Min(v), slices.Max(v))
}

func mid(v []float64) float64 {
	slices.Sort(v)
	if len(v) == 0 {
		return 0
	}
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

func format(v float64) string {
	if v >= 10 || v == 0 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}

// machine describes the machine: CPU model and count, kernel, clock
// source, Go version, and load before the run.
func machine(load string) string {
	model := "unknown CPU"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
				model = strings.TrimSpace(v)
				break
			}
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
	virt := ""
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil && bytes.Contains(b, []byte(" hypervisor")) {
		virt = " (virtual machine)"
	}
	return fmt.Sprintf("%s%s, %d CPUs, %s %s/%s, %s, clock source %s, load average %s before the run",
		model, virt, runtime.NumCPU(), runtime.Version(), runtime.GOOS, runtime.GOARCH, kernel, src, load)
}

func loadAvg() string {
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

// Markers around the table in the README.
const (
	begin = "<!-- table: generated by cmd/table, do not edit -->\n"
	end   = "<!-- end of table -->\n"
)

// replaceTable replaces the text between the markers of the file at path
// with table.
func replaceTable(path, table string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	s := string(b)
	i, j := strings.Index(s, begin), strings.Index(s, end)
	if i < 0 || j < i {
		return fmt.Errorf("%s: no %q ... %q markers", path, strings.TrimSpace(begin), strings.TrimSpace(end))
	}
	s = s[:i+len(begin)] + "\n" + table + "\n" + s[j:]
	return os.WriteFile(path, []byte(s), 0o644)
}
